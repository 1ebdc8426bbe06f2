import type { ExtractedPassage } from "@locus/contracts";
import { buildPassages, DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "./passages.ts";
import { openPdf } from "./pdf-reader.ts";

export interface PdfExtraction {
  pageCount: number;
  /** Passages page by page, in reading order. Call once. */
  passages: AsyncGenerator<ExtractedPassage>;
}

/**
 * Text-layer extraction: every page's lines cut into passages with page and line locators.
 * A page without a text layer gives no passages (OCR is a separate extractor).
 */
export async function extractPdf(
  data: Uint8Array,
  options: { passages?: PassageOptions; onPage?: (page: number, pageCount: number) => void } = {},
): Promise<PdfExtraction> {
  const pdf = await openPdf(data);
  async function* passages(): AsyncGenerator<ExtractedPassage> {
    try {
      for await (const { page, lines } of pdf.pages()) {
        yield* buildPassages(page, lines, options.passages ?? DEFAULT_PASSAGE_OPTIONS);
        options.onPage?.(page, pdf.pageCount);
      }
    } finally {
      await pdf.close();
    }
  }
  return { pageCount: pdf.pageCount, passages: passages() };
}
