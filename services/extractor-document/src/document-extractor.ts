import { Readable } from "node:stream";
import { FileRejectedError, renditionBlobKey, type ExtractedPassage } from "@locus/contracts";
import type { BlobStore } from "@locus/blob-store";
import { ExtractionJob, type ExtractionJobDeps, type ExtractionSummary } from "@locus/extraction-job";
import type { ExtractionPool, ScanReader } from "@locus/pdf-extraction";
import { inspectOfficeDocument, type OfficeConverter } from "@locus/office-converter";
import { readTextFile, TextReadError, type TextFormat } from "@locus/text-reader";

/** The text formats read natively, by the MIME type sniffed at upload. */
const TEXT_FORMATS: ReadonlyMap<string, TextFormat> = new Map([
  ["text/plain", "plain"],
  ["text/markdown", "markdown"],
  ["text/html", "html"],
]);

/**
 * The largest text file of each format read, in bytes: parsing holds the whole text and its
 * structure in this process's heap, markup several times its size (measured with a 512 MB heap,
 * as the Kubernetes manifest gives: 100 MB of plain text and of HTML read, 100 MB of Markdown ran
 * out of memory, 50 MB did not). Larger files fail with `text_too_large`.
 */
export const TEXT_FORMAT_MAX_BYTES: Readonly<Record<TextFormat, number>> = {
  plain: 64 * 1024 * 1024,
  html: 32 * 1024 * 1024,
  markdown: 16 * 1024 * 1024,
};

/** What is done with office documents that carry macros; none ever runs either way. */
export type MacroPolicy = "refuse" | "ignore";

export interface DocumentReaders {
  blobs: BlobStore;
  /** Converts office documents to PDF, in a LibreOffice process of its own per document. */
  converter: OfficeConverter;
  /** Reads the PDF renditions, as the PDF extractor reads uploaded PDFs. */
  pool: ExtractionPool;
  /** How rendered pages without text (a picture of text in a slide) are read, when OCR is on. */
  scans?: ScanReader | undefined;
  macros: MacroPolicy;
  /** Larger text files are refused (`text_too_large`), as are those past TEXT_FORMAT_MAX_BYTES. */
  maxTextBytes: number;
}

/** The share of an office document's progress its conversion stands for: the rest is reading pages. */
const CONVERSION_SHARE = 0.5;

/**
 * Reads an office document: checks its container from its declared structure (a zip bomb, an
 * encrypted or a macro-bearing document is refused before anything is unpacked), converts it to
 * PDF, stores that PDF beside the original (previews show it at the cited page), and reads the
 * PDF's pages: passages carry the page and line a reader sees in the rendition.
 */
async function* readOfficeDocument(
  readers: DocumentReaders,
  data: Buffer,
  progress: (done: number) => void,
  file: { mimeType: string; fileId: string; userId: string },
): AsyncGenerator<ExtractedPassage, ExtractionSummary> {
  const inspection = inspectOfficeDocument(data, file.mimeType);
  if (inspection.hasMacros && readers.macros === "refuse") {
    throw new FileRejectedError(
      "document_macros",
      "The document contains macros, and Locus does not read documents with macros " +
        "(LOCUS_DOCUMENT_MACROS=refuse). Save a copy without them (in Word, Excel or PowerPoint as " +
        ".docx, .xlsx or .pptx rather than a macro-enabled format; in LibreOffice, after removing " +
        "them under Tools > Macros) and upload that.",
    );
  }
  const pdf = await readers.converter.convertToPdf(data, inspection.format, file.fileId);
  progress(CONVERSION_SHARE);
  // Stored before its pages are read, so a preview of a ready file always finds it; removed again
  // when they cannot be read: a failed file keeps nothing derived from it (and one deleted
  // meanwhile is never cleared by anyone else).
  const renditionKey = renditionBlobKey(file.userId, file.fileId);
  await readers.blobs.put(renditionKey, Readable.from([pdf]));
  const { scans } = readers;
  try {
    const pageCount = yield* readers.pool.extract(
      new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength),
      (page, pages) => progress(CONVERSION_SHARE + (1 - CONVERSION_SHARE) * (page / pages)),
      // Its scanned pages take their turn with other files' work as this file's.
      scans && { ...scans, read: (scan) => scans.read(scan, file.fileId) },
    );
    return { pageCount };
  } catch (err) {
    await readers.blobs.delete(renditionKey);
    throw err;
  }
}

/** Reads a text, Markdown or HTML file natively: line locators counted as a reader sees the text. */
function readText(readers: DocumentReaders, data: Buffer, format: TextFormat): ExtractedPassage[] {
  try {
    return readTextFile(data, format, {
      maxBytes: Math.min(readers.maxTextBytes, TEXT_FORMAT_MAX_BYTES[format]),
    });
  } catch (err) {
    if (err instanceof TextReadError)
      throw new FileRejectedError("text_too_large", err.message, { cause: err });
    throw err;
  }
}

/**
 * Turns an uploaded document into stored passages: text formats read as they are, office formats
 * through their PDF rendition.
 */
export function documentExtractionJob(
  deps: Omit<ExtractionJobDeps, "kindName">,
  readers: DocumentReaders,
): ExtractionJob {
  return new ExtractionJob({ ...deps, kindName: "document" }, async function* (data, progress, file) {
    const format = TEXT_FORMATS.get(file.mimeType);
    if (format) {
      yield* readText(readers, data, format);
      progress(1);
      return { pageCount: null };
    }
    return yield* readOfficeDocument(readers, data, progress, file);
  });
}
