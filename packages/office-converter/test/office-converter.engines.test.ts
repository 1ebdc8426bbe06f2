import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileRejectedError } from "@locus/contracts";
import {
  DEFAULT_OFFICE_MEMORY_MB,
  inspectOfficeDocument,
  OfficeConverter,
  type OfficeConverterOptions,
  type OfficeFormat,
} from "../src/index.ts";
import { docxLinkingRemote, odtLinkingImage, odtWithLoadMacro } from "@locus/testing";
import { buildOfficeFixtures, runDocumentMacro, WORDS, type OfficeFixtures } from "./office-fixtures.ts";

/** LibreOffice and Poppler's pdftotext; CI installs both (.ci/packages.sh). */
const HAS_TOOLS =
  existsSync("/usr/lib/libreoffice/program/soffice.bin") &&
  spawnSync("pdftotext", ["-v"]).error === undefined;
const withLibreOffice = HAS_TOOLS ? describe : describe.skip;
const titled = (title: string) =>
  HAS_TOOLS
    ? title
    : `${title} (SKIPPED: LibreOffice or pdftotext is not installed; apt-get install libreoffice-core-nogui libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui poppler-utils)`;

const textOf = (pdf: Buffer) => {
  expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
  return spawnSync("pdftotext", ["-", "-"], { input: pdf, encoding: "utf8" }).stdout;
};

async function rejectionOf(promise: Promise<unknown>): Promise<FileRejectedError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FileRejectedError) return error;
    throw error;
  }
  throw new Error("expected a FileRejectedError");
}

/** Processes whose command line names `path` (a conversion's scratch folder lies under it). */
function processesUnder(path: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (command.includes(path)) found.push(`${pid}: ${command}`);
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

/** An HTTP server on loopback that counts every request it gets. */
async function countingServer(): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/tracker.png`, requests: () => requests };
}

withLibreOffice(titled("OfficeConverter with LibreOffice"), () => {
  let fixtures: OfficeFixtures;
  let workDir: string;
  let converter: OfficeConverter;
  const options = (extra: Partial<OfficeConverterOptions> = {}): OfficeConverterOptions => ({
    timeoutMs: 60_000,
    memoryMb: DEFAULT_OFFICE_MEMORY_MB,
    workDir,
    ...extra,
  });

  beforeAll(() => {
    fixtures = buildOfficeFixtures();
    workDir = mkdtempSync(join(tmpdir(), "office-converter-test-"));
    converter = new OfficeConverter(options());
  });
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));
  afterEach(() => {
    // Every conversion removes its folder, profile and files, whatever its outcome.
    expect(readdirSync(workDir)).toEqual([]);
  });

  test("says which LibreOffice it runs, and isolates it as strongly as the machine allows", async () => {
    const checked = await converter.check();
    expect(checked).toEqual({ ok: true, version: expect.stringMatching(/^\d+\.\d+/) });
    const sandbox = spawnSync("bwrap", ["--unshare-net", "--dev-bind", "/", "/", "--", "true"]).status === 0;
    const namespaces =
      spawnSync("unshare", ["--net", "--", "true"]).status === 0 ||
      spawnSync("unshare", ["--net", "--map-root-user", "--", "true"]).status === 0;
    expect(converter.networkIsolation).toBe(sandbox ? "sandbox" : namespaces ? "namespace" : "config");
  });

  test("never puts a local file a document links into the PDF, where the sandbox runs", async () => {
    // A picture outside the conversion's folder, with words in it, linked by an RTF field:
    // LibreOffice left to itself draws it into the PDF (checked first, so the test can fail).
    const outside = mkdtempSync(join(tmpdir(), "locus-secret-"));
    try {
      const secret = join(outside, "secret.svg");
      writeFileSync(
        secret,
        '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="60"><text x="5" y="40" font-size="30">SECRETWORDS</text></svg>',
      );
      const rtf = Buffer.from(
        `{\\rtf1\\ansi Visible words\\par {\\field{\\*\\fldinst INCLUDEPICTURE "${secret}" \\\\d}{\\fldrslt }}\\par}`,
      );
      writeFileSync(join(outside, "linked.rtf"), rtf);
      await new Promise((resolve) => spawnUnguarded(outside, "linked.rtf").on("close", resolve));
      expect(textOf(readFileSync(join(outside, "linked.pdf")))).toContain("SECRETWORDS");
      if (converter.networkIsolation !== "sandbox") return;
      const pdf = await converter.convertToPdf(rtf, "rtf");
      const text = textOf(pdf);
      expect(text).toContain("Visible words");
      expect(text).not.toContain("SECRETWORDS");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test("converts every format to a PDF holding its words, two conversions at a time", async () => {
    const formats = Object.keys(fixtures.documents) as OfficeFormat[];
    const seconds: string[] = [];
    const convert = async (format: OfficeFormat) => {
      const bytes = fixtures.documents[format];
      const { family } = inspectOfficeDocument(bytes);
      const started = Date.now();
      const pdf = await converter.convertToPdf(bytes, format);
      seconds.push(`${format} ${((Date.now() - started) / 1000).toFixed(1)} s`);
      expect(textOf(pdf)).toContain(WORDS[family]);
    };
    for (let i = 0; i < formats.length; i += 2) await Promise.all(formats.slice(i, i + 2).map(convert));
    console.log(`conversion times: ${seconds.join(", ")}`);
  }, 120_000);

  test("a password-protected document LibreOffice cannot open is conversion_failed", async () => {
    const error = await rejectionOf(converter.convertToPdf(fixtures.encrypted.doc, "doc"));
    expect(error.code).toBe("conversion_failed");
    expect(error.message).toMatch(/password/);
  });

  test("never runs a document's macro bound to its opening", async () => {
    const markerDir = mkdtempSync(join(tmpdir(), "office-macro-"));
    try {
      const marker = join(markerDir, "macro-ran");
      const document = odtWithLoadMacro(marker, `The ${WORDS.text} macro document.`);
      expect(inspectOfficeDocument(document).hasMacros).toBe(true);
      // The control: the document's routine, run with macros allowed, does write the marker.
      const control = runDocumentMacro(document);
      expect({ written: existsSync(marker), control }).toEqual({
        written: true,
        control: expect.any(String),
      });
      rmSync(marker);
      const pdf = await converter.convertToPdf(document, "odt");
      expect(textOf(pdf)).toContain(WORDS.text);
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(markerDir, { recursive: true, force: true });
    }
  });

  describe("a document linking an image from a loopback server", () => {
    let tracker: Awaited<ReturnType<typeof countingServer>>;
    beforeAll(async () => {
      tracker = await countingServer();
    });
    afterAll(() => new Promise<void>((resolve) => tracker.server.close(() => resolve())));

    /** The ODT links its picture from the tracker; the DOCX its picture and its template. */
    const linked = (format: "odt" | "docx") =>
      format === "odt"
        ? odtLinkingImage(tracker.url, `The ${WORDS.text} linked image`)
        : docxLinkingRemote(fixtures.documents.docx, new URL(".", tracker.url).href);

    test.each(["odt", "docx"] as const)(
      "makes LibreOffice, left to itself, fetch the %s's image (the document is live)",
      async (format) => {
        const dir = mkdtempSync(join(tmpdir(), "office-unguarded-"));
        try {
          writeFileSync(join(dir, `linked.${format}`), linked(format));
          const before = tracker.requests();
          // Asynchronously, so that this process's event loop serves the requests meanwhile.
          await new Promise((resolve) => spawnUnguarded(dir, `linked.${format}`).on("close", resolve));
          expect(tracker.requests()).toBeGreaterThan(before);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );

    test.each([
      ["auto", "odt"],
      ["config", "odt"],
      ["auto", "docx"],
      ["config", "docx"],
    ] as const)("with isolation %s, converts the %s without one request", async (isolation, format) => {
      const guarded = new OfficeConverter(options({ networkIsolation: isolation }));
      const before = tracker.requests();
      const pdf = await guarded.convertToPdf(linked(format), format);
      expect(textOf(pdf)).toContain(WORDS.text);
      expect(tracker.requests()).toBe(before);
      if (isolation === "config") expect(guarded.networkIsolation).toBe("config");
    });
  });

  test("stops a conversion past timeoutMs as conversion_timeout, and leaves no LibreOffice process behind", async () => {
    const hurried = new OfficeConverter(options({ timeoutMs: 300 }));
    // check() runs first, with a time of its own; only the conversion gets 300 ms.
    await hurried.check();
    const error = await rejectionOf(hurried.convertToPdf(fixtures.documents.pptx, "pptx"));
    expect(error.code).toBe("conversion_timeout");
    expect(processesUnder(workDir)).toEqual([]);
  });

  test("a memory limit LibreOffice cannot start within is reported by check() and makes conversions converter_unavailable", async () => {
    const starved = new OfficeConverter(options({ memoryMb: 128 }));
    const checked = await starved.check();
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.reason).toMatch(/memory limit of 128 MB/);
    expect((await rejectionOf(starved.convertToPdf(fixtures.documents.odt, "odt"))).code).toBe(
      "converter_unavailable",
    );
  });
});

/** Plain LibreOffice (its own default profile settings, no namespace) converting `name` in `dir`. */
function spawnUnguarded(dir: string, name: string) {
  return spawn(
    "/usr/lib/libreoffice/program/soffice",
    [
      `-env:UserInstallation=file://${join(dir, "profile")}`,
      "--headless",
      "--norestore",
      "--nolockcheck",
      "--nodefault",
      "--nologo",
      "--convert-to",
      "pdf",
      "--outdir",
      dir,
      join(dir, name),
    ],
    { stdio: "ignore", env: { ...process.env, HOME: dir } },
  );
}

describe("OfficeConverter without LibreOffice", () => {
  test("check() names the Debian packages to install, and a conversion is converter_unavailable", async () => {
    const converter = new OfficeConverter({
      sofficePath: "/nonexistent/libreoffice/soffice",
      timeoutMs: 10_000,
      memoryMb: 2048,
    });
    const checked = await converter.check();
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.reason).toMatch(/libreoffice-core-nogui/);
    const error = await rejectionOf(converter.convertToPdf(Buffer.from("{\\rtf1 hello}"), "rtf"));
    expect(error.code).toBe("converter_unavailable");
    expect(error.message).toMatch(
      /libreoffice-core-nogui libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui/,
    );
  });
});
