import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspectOfficeDocument } from "../../office-converter/src/index.ts";
import { withPeakRss } from "../../../bench/harness/process-memory.ts";

/**
 * The real office documents of `pnpm bench --only documents` (bench/fixtures/documents): each is
 * the file its README names, byte for byte, and in the format its name says; and the memory the
 * benchmark reports is that of the processes a conversion starts, not of what already ran.
 */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "../../../bench/fixtures/documents");
const readme = readFileSync(join(FIXTURES, "README.md"), "utf8");
// Beside the documents: their README and the line queries of `pnpm bench --only documents-quality`.
const documents = readdirSync(FIXTURES).filter((name) => name !== "README.md" && name !== "queries.json");

describe("bench/fixtures/documents", () => {
  test("holds every office format the benchmark groups, each file listed in the README with its SHA-256", () => {
    expect(new Set(documents.map((name) => name.replace(/^.*\./, "")))).toEqual(
      new Set(["odt", "docx", "doc", "rtf", "pptx", "odp", "xlsx", "xls"]),
    );
    for (const name of documents) {
      const sha256 = createHash("sha256")
        .update(readFileSync(join(FIXTURES, name)))
        .digest("hex");
      expect(readme).toContain(`- \`${name}\`: \`${sha256}\``);
    }
  });

  test.each(documents)("%s is inspected as the format its name says", (name) => {
    const inspected = inspectOfficeDocument(readFileSync(join(FIXTURES, name)));
    expect(inspected.format).toBe(name.replace(/^.*\./, ""));
    expect(inspected.hasMacros).toBe(false);
  });
});

/** A node process holding `mb` MB of touched memory until it is told to end (stdin closes). */
function holder(mb: number) {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const b = Buffer.alloc(${mb} * 1024 * 1024, 1); process.stdin.on("end", () => process.exit(b[0] - 1)); process.stdin.resume(); console.log("ready")`,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const ready = new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  const ended = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { ready, end: () => (child.stdin.end(), ended) };
}

describe("withPeakRss (bench/harness/process-memory.ts)", () => {
  test("counts the processes started during the step and leaves out those already running", async () => {
    const before = holder(300);
    await before.ready;
    try {
      const { peakMb } = await withPeakRss(10, async () => {
        const during = holder(120);
        await during.ready;
        await new Promise((resolve) => setTimeout(resolve, 200));
        await during.end();
      });
      // The 120 MB child and node's own ~40 MB; not the 300 MB child that ran before the step.
      expect(peakMb).toBeGreaterThanOrEqual(120);
      expect(peakMb).toBeLessThan(300);
    } finally {
      await before.end();
    }
  });
});
