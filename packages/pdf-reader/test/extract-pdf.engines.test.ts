import { randomBytes } from "node:crypto";
import type { ExtractedPassage } from "@locus/contracts";
import { makePdf, pageWith } from "@locus/testing";
import { extractPdf, type PdfExtraction } from "../src/extract-pdf.ts";
import { openPdf, PdfReadError } from "../src/pdfjs-reader.ts";
import { loadLexicon } from "@locus/embedder";

/** A private copy as a plain Uint8Array (pdf.js takes ownership of the bytes it is given). */
const bytes = (data: Uint8Array): Uint8Array => new Uint8Array(data);

async function collect(extraction: PdfExtraction): Promise<ExtractedPassage[]> {
  const passages: ExtractedPassage[] = [];
  for await (const p of extraction.passages) passages.push(p);
  return passages;
}

/** Extracts every passage; any failure, at open or while reading pages, rejects. */
const extractAll = async (data: Uint8Array) => collect(await extractPdf(data));

async function expectPdfError(data: Uint8Array, code: "pdf_corrupt" | "pdf_encrypted"): Promise<void> {
  const error: unknown = await extractAll(data).then(
    () => new Error("extraction succeeded"),
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(PdfReadError);
  expect((error as PdfReadError).code).toBe(code);
  expect((error as PdfReadError).message.length).toBeGreaterThan(10);
}

const PHRASE = "The zebra crossing budget was approved";

describe("extractPdf on real PDFs", () => {
  let threePages: Buffer;

  beforeAll(async () => {
    threePages = await makePdf({
      pages: [
        pageWith("First page opening remark", 1, 30),
        pageWith(PHRASE, 17, 30),
        pageWith("Closing words on page three", 30, 30),
      ],
    });
  });

  it("reports the page count", async () => {
    const extraction = await extractPdf(bytes(threePages));
    expect(extraction.pageCount).toBe(3);
    await collect(extraction);
  });

  it("finds a phrase placed on page 2, line 17 in a passage pointing at page 2 and a range holding line 17", async () => {
    const passages = await extractAll(bytes(threePages));
    const hits = passages.filter((p) => p.content.includes(PHRASE));
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) {
      const { page, line, line_end } = hit.locator;
      expect(page).toBe(2);
      expect(line).toBeLessThanOrEqual(17);
      expect(line_end).toBeGreaterThanOrEqual(17);
      // The content's line for page line 17 is exactly the phrase.
      expect(hit.content.split("\n")[17 - line!]).toBe(PHRASE);
    }
  });

  it("numbers lines from the top of each page, first and last line included", async () => {
    const passages = await extractAll(bytes(threePages));
    const first = passages.find((p) => p.content.includes("First page opening remark"));
    expect(first?.locator).toMatchObject({ page: 1, line: 1 });
    expect(first?.content.split("\n")[0]).toBe("First page opening remark");
    const last = passages.filter((p) => p.content.includes("Closing words on page three"));
    expect(last.length).toBeGreaterThan(0);
    for (const p of last) {
      expect(p.locator).toMatchObject({ page: 3, line_end: 30 });
      expect(p.content.split("\n").at(-1)).toBe("Closing words on page three");
    }
  });

  it("gives every passage a text locator, and every line of every page is in a passage", async () => {
    const passages = await extractAll(bytes(threePages));
    for (const page of [1, 2, 3]) {
      const onPage = passages.filter((p) => p.locator.page === page);
      const covered = new Set(
        onPage.flatMap((p) =>
          Array.from({ length: p.locator.line_end! - p.locator.line! + 1 }, (_, i) => p.locator.line! + i),
        ),
      );
      expect([...covered].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    }
    for (const p of passages) expect(p.locator.source).toBe("text");
    // Reading order: page by page.
    const pages = passages.map((p) => p.locator.page!);
    expect(pages).toEqual([...pages].sort((a, b) => a - b));
  });

  it("reports progress page by page", async () => {
    const calls: [number, number][] = [];
    const extraction = await extractPdf(bytes(threePages), {
      onPage: (page, count) => calls.push([page, count]),
    });
    await collect(extraction);
    expect(calls).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it("honours passage options", async () => {
    const extraction = await extractPdf(bytes(threePages), { passages: { maxLines: 2, maxChars: 1000 } });
    const passages = await collect(extraction);
    // Three pages of text: passages to check (a loop over none would pass).
    expect(passages.length).toBeGreaterThan(3);
    for (const p of passages) expect(p.content.split("\n").length).toBeLessThanOrEqual(2);
  });

  it("a page without a text layer yields no passages while the other pages do", async () => {
    const pdf = await makePdf({
      pages: [pageWith("Words on the first page", 3, 10), [], pageWith("Words on the third page", 4, 10)],
    });
    const extraction = await extractPdf(bytes(pdf));
    expect(extraction.pageCount).toBe(3);
    const passages = await collect(extraction);
    expect(passages.filter((p) => p.locator.page === 2)).toEqual([]);
    expect(passages.some((p) => p.locator.page === 1 && p.content.includes("Words on the first page"))).toBe(
      true,
    );
    expect(passages.some((p) => p.locator.page === 3 && p.content.includes("Words on the third page"))).toBe(
      true,
    );
  });

  it("with OCR on, hands only pages that show more than their text layer to it: a drawing, not a title page or a blank one", async () => {
    const pdf = await makePdf({
      pages: [
        pageWith("Words on the first page", 3, 10),
        [],
        ["GNU Licenses"],
        [""],
        pageWith("Last page", 2, 10),
      ],
    });
    const scanned: number[] = [];
    const extraction = await extractPdf(bytes(pdf), {
      scans: {
        dpi: 72,
        maxPixels: 1_000_000,
        onScannedPage: (scan) => {
          scanned.push(scan.page);
          return Promise.resolve();
        },
      },
    });
    const passages = await collect(extraction);
    // Page 2 is a grey box and no text: OCR's. Page 3 shows only its two words, page 4 nothing.
    expect(scanned).toEqual([2]);
    expect(passages.find((p) => p.content === "GNU Licenses")?.locator).toMatchObject({ page: 3, line: 1 });
    expect(passages.filter((p) => p.locator.page === 4)).toEqual([]);
    expect(passages.some((p) => p.locator.page === 5)).toBe(true);
  });

  it("a PDF of only image pages has pages but no passages", async () => {
    const extraction = await extractPdf(bytes(await makePdf({ pages: [[], []] })));
    expect(extraction.pageCount).toBe(2);
    expect(await collect(extraction)).toEqual([]);
  });

  it("extracts every page of a 200-page PDF", async () => {
    const pages = Array.from({ length: 200 }, (_, i) =>
      pageWith(`Marker for page ${i + 1} here`, (i % 8) + 1, 8),
    );
    const extraction = await extractPdf(bytes(await makePdf({ pages })));
    expect(extraction.pageCount).toBe(200);
    const passages = await collect(extraction);
    expect(new Set(passages.map((p) => p.locator.page))).toEqual(
      new Set(Array.from({ length: 200 }, (_, i) => i + 1)),
    );
    for (let n = 1; n <= 200; n++) {
      const marker = passages.find((p) => p.content.split("\n").includes(`Marker for page ${n} here`));
      expect(marker?.locator.page).toBe(n);
    }
  });

  it("accepts a Node Buffer, as fs.readFile and Buffer.concat return", async () => {
    const extraction = await extractPdf(Buffer.from(threePages));
    expect(extraction.pageCount).toBe(3);
    expect((await collect(extraction)).length).toBeGreaterThan(0);
  });

  it("openPdf reads pages one at a time with their lines", async () => {
    const pdf = await openPdf(bytes(threePages));
    try {
      expect(pdf.pageCount).toBe(3);
      const seen: number[] = [];
      for await (const { page, lines } of pdf.pages()) {
        seen.push(page);
        expect(lines).toHaveLength(30);
        expect(lines.map((l) => l.number)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
        if (page === 2) expect(lines[16]?.text).toBe(PHRASE);
      }
      expect(seen).toEqual([1, 2, 3]);
    } finally {
      await pdf.close();
    }
  });
});

describe("extractPdf on PDFs it cannot read", () => {
  it("a password-protected PDF fails with pdf_encrypted", async () => {
    const pdf = await makePdf({ pages: [["Top secret figures"]], userPassword: "hunter2" });
    await expectPdfError(bytes(pdf), "pdf_encrypted");
  });

  it("a truncated PDF (the first half of its bytes) fails with pdf_corrupt", async () => {
    const pdf = await makePdf({ pages: [pageWith("cut off", 3, 30), pageWith("never arrives", 3, 30)] });
    await expectPdfError(bytes(pdf.subarray(0, Math.floor(pdf.length / 2))), "pdf_corrupt");
  });

  it("a PDF missing only its last bytes fails with pdf_corrupt", async () => {
    const pdf = await makePdf({ pages: [pageWith("almost whole", 3, 30)] });
    await expectPdfError(bytes(pdf.subarray(0, pdf.length - 10)), "pdf_corrupt");
  });

  it("random bytes fail with pdf_corrupt", async () => {
    await expectPdfError(bytes(randomBytes(64 * 1024)), "pdf_corrupt");
  });

  it("zero bytes fail with pdf_corrupt", async () => {
    await expectPdfError(new Uint8Array(0), "pdf_corrupt");
  });

  it("a PDF header and end marker around garbage fail with pdf_corrupt", async () => {
    const junk = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(8 * 1024), Buffer.from("\n%%EOF\n")]);
    await expectPdfError(bytes(junk), "pdf_corrupt");
  });

  it("a PDF whose body is damaged while header and trailer survive fails with pdf_corrupt", async () => {
    const pdf = bytes(await makePdf({ pages: [pageWith("damaged body", 3, 30), pageWith("more", 3, 30)] }));
    // Overwrite the middle third: page content streams, not the header or the cross-reference table.
    const from = Math.floor(pdf.length / 3);
    pdf.fill(0x41, from, 2 * from);
    await expectPdfError(pdf, "pdf_corrupt");
  });
});

describe("extractPdf: words whole across line and page breaks, and where lines are", () => {
  let passages: ExtractedPassage[];
  const filler = (n: number) => `Filler line ${n} about weather and tea.`;

  beforeAll(async () => {
    const lexicon = await loadLexicon();
    const pdf = await makePdf({
      pages: [
        [
          filler(1),
          "Here we deter-",
          "mine the tide, and a well-",
          "known harbour fact.",
          filler(5),
          "The last line breaks infor-",
        ],
        ["mation across the page break.", filler(2)],
      ],
    });
    passages = await collect(await extractPdf(bytes(pdf), { lexicon }));
  });

  const withText = (text: string) => passages.find((p) => p.content.includes(text));

  it("joins a word hyphenated at a line end onto its first line, and marks the line as going on", () => {
    const passage = withText("Here we determine");
    expect(passage?.content.split("\n").slice(0, 3)).toEqual([
      filler(1),
      "Here we determine",
      "the tide, and a well-known",
    ]);
    expect(passage?.locator.line_joins).toEqual(expect.arrayContaining([1, 2]));
    expect(passages.some((p) => /deter- |deter-\n/.test(p.content))).toBe(false);
  });

  it("keeps a real compound's hyphen at a line end", () => {
    expect(withText("well-known")).toBeDefined();
    expect(withText("wellknown")).toBeUndefined();
  });

  it("joins a word hyphenated at the foot of a page with its end on the next page, on the first page", () => {
    const last = withText("The last line breaks information");
    expect(last?.locator.page).toBe(1);
    const next = passages.find((p) => p.locator.page === 2);
    expect(next?.content.startsWith("across the page break.")).toBe(true);
  });

  it("gives text passages a box and one box per line, in points from the page's top-left corner", () => {
    const first = passages[0];
    const boxes = first?.locator.line_boxes ?? [];
    expect(boxes).toHaveLength(first?.content.split("\n").length ?? -1);
    // makePdf puts line n's top at 60 + (n - 1) * 16.5 points, x at 72, 11-point type.
    boxes.forEach((box, i) => {
      expect(box.x).toBeCloseTo(72, 0);
      expect(Math.abs(box.y - (60 + i * 16.5))).toBeLessThan(4);
      expect(box.height).toBeGreaterThan(8);
      expect(box.height).toBeLessThan(16);
    });
    expect(first?.locator.bbox?.y).toBe(boxes[0]?.y);
  });
});
