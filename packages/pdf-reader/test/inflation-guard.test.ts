import { deflateSync } from "node:zlib";
import { makePdf, pdfFlateBomb, pdfStream, rawPdf } from "@locus/testing";
import { findInflationBomb } from "../src/inflation-guard.ts";
import { openPdf, PdfReadError } from "../src/pdfjs-reader.ts";

/** A one-page PDF whose content stream is `content`, under the given filters. */
const pdfWithContent = (content: Buffer, filters: string) =>
  rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    pdfStream(content, `/Filter ${filters}`),
  ]);

describe("the inflation guard", () => {
  it("finds a stream deflated twice that expands past the limit", () => {
    const bomb = pdfFlateBomb(64 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(4096);
    expect(findInflationBomb(bomb, 16 * 1024 * 1024)).not.toBeNull();
    // Under a limit above what it holds, it is only a large page.
    expect(findInflationBomb(bomb, 128 * 1024 * 1024)).toBeNull();
  });

  it("finds a single Flate stream past the limit, by either name of the filter", () => {
    const big = deflateSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    for (const filter of ["/FlateDecode", "/Fl", "[/FlateDecode]"]) {
      expect(findInflationBomb(pdfWithContent(big, filter), 1024 * 1024)).not.toBeNull();
    }
  });

  it("passes ordinary PDFs, damaged streams and streams under other filters", async () => {
    const pdf = await makePdf({ pages: [["An ordinary page."], ["Another one."]] });
    expect(findInflationBomb(pdf, 1024 * 1024)).toBeNull();
    expect(
      findInflationBomb(pdfWithContent(Buffer.from("not deflate at all"), "/FlateDecode"), 16),
    ).toBeNull();
    const hex = Buffer.from("20".repeat(4096));
    expect(findInflationBomb(pdfWithContent(hex, "/ASCIIHexDecode"), 16)).toBeNull();
  });

  it("makes openPdf refuse the file as too complex, before pdf.js inflates anything", async () => {
    const error: unknown = await openPdf(pdfFlateBomb()).then(
      () => new Error("opened"),
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(PdfReadError);
    expect((error as PdfReadError).code).toBe("pdf_too_complex");
    expect((error as PdfReadError).message).toMatch(/more than 256 MB \(a decompression bomb\)/);
  });
});
