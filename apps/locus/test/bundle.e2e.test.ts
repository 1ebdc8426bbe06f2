import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "@locus/testing";

/**
 * The built bundle (`pnpm build`, scripts/build.mjs), which the image and `pnpm start:split` run
 * with plain node: it starts every module and finds every file a module reads from disk. Run from
 * a folder outside the repository, so that nothing can lean on the working directory or on tsx
 * (a worker thread asking for `--import tsx` would not find it there).
 */

const outDir = mkdtempSync(join(tmpdir(), "locus-bundle-"));
const elsewhere = mkdtempSync(join(tmpdir(), "locus-bundle-cwd-"));
const dataDir = mkdtempSync(join(tmpdir(), "locus-bundle-data-"));
let child: ChildProcessWithoutNullStreams | undefined;
const logs: string[] = [];

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  for (const dir of [outDir, elsewhere, dataDir]) rmSync(dir, { recursive: true, force: true });
});

/** Starts `node <bundle>/main.js` and resolves with its URL once it logs that it listens. */
function startBundle(): Promise<string> {
  child = spawn(process.execPath, [join(outDir, "main.js")], {
    cwd: elsewhere,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      HOST: "127.0.0.1",
      PORT: "0",
      LOCUS_DATA_DIR: dataDir,
    },
  });
  const started = child;
  return new Promise((resolve, reject) => {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        logs.push(line);
        const url = /"url":"(http:\/\/[^"]+)".*"msg":"listening"/.exec(line)?.[1];
        if (url) resolve(url);
      }
    };
    started.stdout.on("data", onData);
    started.stderr.on("data", onData);
    started.on("exit", (code) => reject(new Error(`the bundle exited (${code}):\n${logs.join("\n")}`)));
  });
}

async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`not ready in ${timeoutMs} ms:\n${logs.join("\n")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("the built bundle", () => {
  let url: string;

  it("builds", () => {
    const build = spawnSync(process.execPath, ["scripts/build.mjs", outDir], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(build.stderr).toBe("");
    expect(build.status).toBe(0);
  });

  it("starts the all-in-one with plain node and becomes ready", async () => {
    url = await startBundle();
    await waitReady(url, 60_000);
    // The PDF worker thread is a bundle of its own: its warm-up reads a PDF.
    expect(logs.some((line) => line.includes('"msg":"PDF reader ready"'))).toBe(true);
    const problems = logs.filter((line) => /"level":(50|60)/.test(line));
    expect(problems).toEqual([]);
  }, 90_000);

  it.each([
    // services/dashboard/public, found from the dashboard's own source folder
    "/dashboard/assets/styles.css",
    // pdfjs-dist, resolved from the dashboard's package (not a dependency of apps/locus)
    "/dashboard/vendor/pdfjs/pdf.worker.min.mjs",
    // swagger-ui-dist, from the gateway's package
    "/docs/assets/swagger-ui.css",
  ])("serves %s, a file it finds on disk", async (path) => {
    const res = await fetch(`${url}${path}`);
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  it("runs the operator CLI", () => {
    const cli = spawnSync(
      process.execPath,
      [join(outDir, "cli.js"), "users", "create", "--email", "bundle@example.com"],
      {
        cwd: elsewhere,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOCUS_DATA_DIR: dataDir },
      },
    );
    expect(cli.stderr).toBe("");
    expect(cli.stdout).toMatch(/^Created user bundle@example\.com/m);
    expect(cli.status).toBe(0);
  });
});
