import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtractedPassage } from "@locus/contracts";
import { makePdf, pageWith, PARITY_MANUALS, pdfFlateBomb, QUALITY_FIXTURES } from "@locus/testing";
import {
  extractPdf,
  findPoppler,
  openPdfWithPoppler,
  PdfReadError,
  type PopplerLimits,
  type PopplerReading,
  type PopplerTools,
  type ScannedPage,
} from "../src/index.ts";
import { openPdf, type OpenedPdf } from "../src/pdfjs-reader.ts";
import { pageOf } from "../src/poppler-reader.ts";

/**
 * Poppler's tools as this machine has them. CI installs poppler-utils (.ci/packages.sh), so these
 * suites run there; a machine without them skips them, and the suite's name says why.
 */
const TOOLS = findPoppler();
const poppler = TOOLS ? describe : describe.skip;
const titled = (title: string) =>
  TOOLS ? title : `${title} (SKIPPED: Poppler's tools are not installed; apt-get install poppler-utils)`;

const LIMITS: PopplerLimits = { maxSeconds: 60, maxMemoryBytes: 1536 * 1024 * 1024 };

/** A private copy (pdf.js takes over the bytes it is given). */
const bytes = (data: Uint8Array): Uint8Array => new Uint8Array(data);

async function passagesOf(
  data: Uint8Array,
  reading?: PopplerReading,
  scans?: ScannedPage[],
): Promise<ExtractedPassage[]> {
  const extraction = await extractPdf(bytes(data), {
    ...(reading ? { poppler: reading } : {}),
    ...(scans
      ? {
          scans: {
            dpi: 100,
            maxPixels: 4_000_000,
            onScannedPage: (scan) => {
              scans.push(scan);
              return Promise.resolve();
            },
          },
        }
      : {}),
  });
  const passages: ExtractedPassage[] = [];
  for await (const passage of extraction.passages) passages.push(passage);
  return passages;
}

/** What a reader says of each line: page, number and text, one string each. */
async function linesOf(pdf: OpenedPdf): Promise<string[]> {
  const lines: string[] = [];
  try {
    for await (const page of pdf.pages()) {
      for (const line of page.lines) lines.push(`p${page.page} l${line.number}: ${line.text}`);
    }
  } finally {
    await pdf.close();
  }
  return lines;
}

/** The lines only one side has (a multiset difference). */
function onlyIn(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const line of b) left.set(line, (left.get(line) ?? 0) + 1);
  return a.filter((line) => {
    const n = left.get(line) ?? 0;
    if (n === 0) return true;
    left.set(line, n - 1);
    return false;
  });
}

/** A stand-in for one of the tools: a shell script in a folder of its own. */
function fakeTool(dir: string, name: string, script: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("pdftotext's words as line pieces", () => {
  it("decodes XML escapes, drops glyphs that came out as control characters, and puts baselines in PDF units", () => {
    const page = pageOf(
      '<page width="600.000000" height="800.000000">' +
        '<word xMin="100.000000" yMin="90.700000" xMax="130.000000" yMax="100.000000">a&amp;b&#x3c;</word>' +
        '<word xMin="140.000000" yMin="80.000000" xMax="150.000000" yMax="110.000000">&#x10;</word>' +
        '<word xMin="140.000000" yMin="90.700000" xMax="160.000000" yMax="100.000000">x&#x11;y</word>',
    );
    expect(page.width).toBe(600);
    expect(page.height).toBe(800);
    expect(page.pieces.map((p) => p.text)).toEqual(["a&b<", "xy"]);
    // A 9.3-point box is a 10-point font whose baseline sits 2.1 points above the box's bottom.
    expect(page.pieces[0]?.height).toBeCloseTo(10, 5);
    expect(page.pieces[0]?.y).toBeCloseTo(800 - (100 - 2.1), 5);
  });
});

describe(titled("extractPdf with Poppler's tools (poppler-utils, real)"), () => {
  let dir: string;
  let threePages: Buffer;
  const tools = (): PopplerTools => {
    if (!TOOLS) throw new Error("Poppler's tools are not installed");
    return TOOLS;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "locus-poppler-test-"));
    threePages = await makePdf({
      pages: [
        pageWith("First page opening remark", 1, 30),
        pageWith("The zebra crossing budget was approved", 17, 30),
        pageWith("Closing words on page three", 30, 30),
      ],
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  poppler("reading", () => {
    it("gives the same passages and locators as pdf.js on a generated PDF", async () => {
      const fallbacks: string[] = [];
      const byPoppler = await passagesOf(threePages, {
        tools: tools(),
        limits: LIMITS,
        onFallback: (reason) => fallbacks.push(reason),
      });
      const byPdfjs = await passagesOf(threePages);
      expect(fallbacks).toEqual([]);
      expect(byPoppler.map((p) => [p.content, p.locator.page, p.locator.line, p.locator.line_end])).toEqual(
        byPdfjs.map((p) => [p.content, p.locator.page, p.locator.line, p.locator.line_end]),
      );
    });

    it.each(PARITY_MANUALS)(
      "reads %s (a real Debian manual) with ≥ 97% of its lines as pdf.js reads them: page, number and text",
      async (name) => {
        const data = readFileSync(join(QUALITY_FIXTURES, name));
        const byPoppler = await openPdfWithPoppler(bytes(data), tools(), LIMITS);
        const byPdfjs = await openPdf(bytes(data));
        expect(byPoppler.pageCount).toBe(byPdfjs.pageCount);
        const [a, b] = [await linesOf(byPoppler), await linesOf(byPdfjs)];
        const differ = { onlyPoppler: onlyIn(a, b), onlyPdfjs: onlyIn(b, a) };
        const agreement = 1 - Math.max(differ.onlyPoppler.length, differ.onlyPdfjs.length) / b.length;
        // The differences are listed when it fails, not hidden: Poppler composes accents
        // ("Möller"), drops overlaid marks, and splits a few rows with superscripts otherwise.
        const listed = (lines: string[]) => lines.map((line) => `  ${line}`).join("\n");
        const report = `${name}: ${(agreement * 100).toFixed(1)}% of lines agree\nonly Poppler's:\n${listed(differ.onlyPoppler)}\nonly pdf.js's:\n${listed(differ.onlyPdfjs)}`;
        expect(agreement >= 0.97 ? "≥ 97%" : report).toBe("≥ 97%");
      },
    );

    it("puts each line's box where pdf.js puts it, within 2 points", async () => {
      const data = readFileSync(join(QUALITY_FIXTURES, "fontconfig-user.pdf"));
      const boxes = async (pdf: OpenedPdf) => {
        const found = new Map<string, { x: number; y: number; width: number; height: number }>();
        for await (const page of pdf.pages()) {
          for (const line of page.lines) if (line.bbox) found.set(`${page.page}:${line.text}`, line.bbox);
        }
        await pdf.close();
        return found;
      };
      const byPoppler = await boxes(await openPdfWithPoppler(bytes(data), tools(), LIMITS));
      const byPdfjs = await boxes(await openPdf(bytes(data)));
      let compared = 0;
      const far: string[] = [];
      for (const [key, box] of byPdfjs) {
        const other = byPoppler.get(key);
        if (!other) continue;
        compared += 1;
        const off = Math.max(Math.abs(box.x - other.x), Math.abs(box.y - other.y));
        if (off > 2) far.push(`${key} (${off.toFixed(1)} pt)`);
      }
      expect(compared).toBeGreaterThan(byPdfjs.size * 0.9);
      expect(far.length / compared).toBeLessThan(0.03);
    });

    it("draws a page without a text layer for OCR with pdftoppm, as large as pdf.js draws it, and not a title page", async () => {
      const pdf = await makePdf({
        pages: [pageWith("Words on the first page", 3, 10), [], ["GNU Licenses"]],
      });
      const byPoppler: ScannedPage[] = [];
      const byPdfjs: ScannedPage[] = [];
      await passagesOf(pdf, { tools: tools(), limits: LIMITS }, byPoppler);
      await passagesOf(pdf, undefined, byPdfjs);
      expect(byPoppler.map((s) => s.page)).toEqual([2]);
      const [drawn, reference] = [byPoppler[0]!, byPdfjs[0]!];
      expect(Math.abs(drawn.width - reference.width)).toBeLessThanOrEqual(1);
      expect(Math.abs(drawn.height - reference.height)).toBeLessThanOrEqual(1);
      expect(drawn.grey).toHaveLength(drawn.width * drawn.height);
      // The grey box drawn at (72, 72), 200 × 100 points, is there; the rest is white.
      const at = (xPt: number, yPt: number) =>
        drawn.grey[
          Math.round(yPt / drawn.pointsPerPixel) * drawn.width + Math.round(xPt / drawn.pointsPerPixel)
        ];
      expect(at(150, 120)).toBeLessThan(200);
      expect(at(400, 500)).toBe(255);
    });
  });

  poppler("falling back to pdf.js", () => {
    it("reads the whole file with pdf.js when a tool cannot run within its bounds (1 MB of memory)", async () => {
      const fallbacks: string[] = [];
      const passages = await passagesOf(threePages, {
        tools: tools(),
        limits: { ...LIMITS, maxMemoryBytes: 1024 * 1024 },
        onFallback: (reason) => fallbacks.push(reason),
      });
      expect(fallbacks).toHaveLength(tools().bounds.prlimit ? 1 : 0);
      expect(fallbacks[0] ?? "pdfinfo").toMatch(/pdfinfo/);
      expect(passages.map((p) => p.content)).toEqual((await passagesOf(threePages)).map((p) => p.content));
    });

    it("reads the rest with pdf.js, from the first page pdftotext did not give, when it fails partway", async () => {
      // Gives pdftotext's first two pages, then fails as a damaged page would make it.
      const broken = fakeTool(
        dir,
        "pdftotext-two-pages",
        `"${tools().pdftotext}" "$@" | awk '{ print } /<\\/page>/ { if (++n == 2) exit }'; exit 1`,
      );
      const fallbacks: string[] = [];
      const pages: number[] = [];
      const extraction = await extractPdf(bytes(threePages), {
        poppler: {
          tools: { ...tools(), pdftotext: broken },
          limits: LIMITS,
          onFallback: (reason) => fallbacks.push(reason),
        },
        onPage: (page) => pages.push(page),
      });
      const passages: ExtractedPassage[] = [];
      for await (const passage of extraction.passages) passages.push(passage);
      expect(fallbacks).toHaveLength(1);
      expect(fallbacks[0]).toMatch(/after page 2 of 3.*pdf\.js read from page 3/);
      expect(pages).toEqual([1, 2, 3]);
      const reference = await passagesOf(threePages);
      expect(passages.map((p) => [p.content, p.locator.page, p.locator.line])).toEqual(
        reference.map((p) => [p.content, p.locator.page, p.locator.line]),
      );
    });

    it("stops a tool that gives no page for ten times its budget (a hang), and pdf.js reads the file", async () => {
      const stuck = fakeTool(dir, "pdftotext-stuck", "exec sleep 30");
      const started = Date.now();
      const passages = await passagesOf(threePages, {
        tools: { ...tools(), pdftotext: stuck },
        limits: { ...LIMITS, maxSeconds: 1 },
      });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(passages.length).toBe((await passagesOf(threePages)).length);
    });
  });

  poppler("processor time, not waiting, is what stops a tool (#35)", () => {
    const onLinux = () => Boolean(tools().bounds.prlimit);

    it("stops a tool that uses more processor time than its budget, saying so, and pdf.js reads the file", async () => {
      if (!onLinux()) return;
      // Burns a core: the budget of 1 s is used in about a second of wall-clock time.
      const spinning = fakeTool(dir, "pdfinfo-spinning", "while :; do :; done");
      const fallbacks: string[] = [];
      const passages = await passagesOf(threePages, {
        tools: { ...tools(), pdfinfo: spinning },
        limits: { ...LIMITS, maxSeconds: 1 },
        onFallback: (reason) => fallbacks.push(reason),
      });
      expect(fallbacks).toEqual([
        expect.stringMatching(/pdfinfo ended .*used more than its 1 s of processor time/),
      ]);
      expect(passages.map((p) => p.content)).toEqual((await passagesOf(threePages)).map((p) => p.content));
    });

    it("lets a tool wait longer than its budget for a core: waiting uses no processor time", async () => {
      if (!onLinux()) return;
      // Three seconds asleep (as a tool waits for a core on a busy machine), then Poppler's own work.
      const slowStarting = (name: "pdfinfo" | "pdftotext" | "pdftoppm") =>
        fakeTool(dir, `${name}-slow-start`, `sleep 3; exec "${tools()[name]}" "$@"`);
      const linesPerPage = async (pdf: OpenedPdf, render: boolean) => {
        const seen: string[] = [];
        try {
          for await (const page of pdf.pages()) {
            seen.push(`p${page.page}: ${page.lines.map((line) => line.text).join(" / ")}`);
            if (render)
              expect((await page.render({ dpi: 50, maxPixels: 1_000_000 })).width).toBeGreaterThan(0);
          }
        } finally {
          await pdf.close();
        }
        return seen;
      };
      const slow = await openPdfWithPoppler(
        bytes(threePages),
        {
          ...tools(),
          pdfinfo: slowStarting("pdfinfo"),
          pdftotext: slowStarting("pdftotext"),
          pdftoppm: slowStarting("pdftoppm"),
        },
        { ...LIMITS, maxSeconds: 1 },
      );
      // Each tool took three times its budget on the wall clock, and nothing threw.
      expect(await linesPerPage(slow, true)).toEqual(
        await linesPerPage(await openPdfWithPoppler(bytes(threePages), tools(), LIMITS), false),
      );
    }, 30_000);
  });

  poppler("files neither can read fail as with pdf.js alone", () => {
    const reading = () => ({ tools: tools(), limits: LIMITS });
    const failure = (data: Uint8Array) =>
      passagesOf(data, reading()).then(
        () => null,
        (err: unknown) => (err instanceof PdfReadError ? err.code : String(err)),
      );

    it("a password-protected PDF fails with pdf_encrypted", async () => {
      expect(await failure(await makePdf({ pages: [["Top secret figures"]], userPassword: "hunter2" }))).toBe(
        "pdf_encrypted",
      );
    });

    it("a truncated PDF, random bytes, and garbage inside a PDF frame fail with pdf_corrupt", async () => {
      const pdf = await makePdf({ pages: [pageWith("cut off", 3, 30), pageWith("never arrives", 3, 30)] });
      const framed = Buffer.concat([
        Buffer.from("%PDF-1.7\n"),
        randomBytes(8 * 1024),
        Buffer.from("\n%%EOF\n"),
      ]);
      expect(await failure(pdf.subarray(0, Math.floor(pdf.length / 2)))).toBe("pdf_corrupt");
      expect(await failure(randomBytes(64 * 1024))).toBe("pdf_corrupt");
      expect(await failure(framed)).toBe("pdf_corrupt");
    });

    it("a decompression bomb is refused before any tool inflates it", async () => {
      // A tool that would leave a mark if it ran.
      const mark = join(dir, "ran");
      const spy = fakeTool(dir, "pdfinfo-spy", `touch "${mark}"; exit 1`);
      const code = await passagesOf(pdfFlateBomb(), {
        tools: { ...tools(), pdfinfo: spy },
        limits: LIMITS,
      }).then(
        () => null,
        (err: unknown) => (err instanceof PdfReadError ? err.code : String(err)),
      );
      expect(code).toBe("pdf_too_complex");
      expect(() => readFileSync(mark)).toThrow();
    });
  });
});
