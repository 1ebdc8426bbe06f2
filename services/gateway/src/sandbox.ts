import {
  nextPosition,
  publicBox,
  SEARCH_LIMITS,
  TEXT_MIME_TYPES,
  fileMatchesFilter,
  type FileFilter,
  type FileMetadata,
  type FilePassagesDto,
  type FileRecordDto,
  type FileType,
  type SearchResponseDto,
} from "@locus/contracts";
import { matchedWords, queryWords, toCodePoints } from "@locus/passages";
import type { Input } from "./operations/operation.ts";
import type { search } from "./operations/files.ts";

/**
 * Test keys get these answers at once: shaped like live ones, marked `sandbox: true`, built from
 * the request alone. Nothing here reads or writes stored data, so a test key can never see live
 * data, and live keys never see these.
 */
export const SANDBOX_FILE_ID = "file_sandbox_example";
export const SANDBOX_FILE_NAME = "sandbox-example.pdf";
const EPOCH = "2026-01-01T00:00:00.000Z";

export function sandboxFile(
  overrides: Partial<
    Pick<FileRecordDto, "id" | "original_name" | "file_type" | "mime_type" | "size_bytes" | "metadata">
  > = {},
): FileRecordDto {
  // Recordings have a length and no pages; documents and images the other way round; text files
  // (a document read as it is, not converted) neither.
  const recording = overrides.file_type === "audio" || overrides.file_type === "video";
  const text = overrides.mime_type !== undefined && TEXT_MIME_TYPES.has(overrides.mime_type);
  return {
    id: SANDBOX_FILE_ID,
    original_name: SANDBOX_FILE_NAME,
    status: "ready",
    file_type: "pdf",
    mime_type: "application/pdf",
    size_bytes: SAMPLE_PDF.length,
    page_count: recording || text ? null : 1,
    duration_s: recording ? 30 : null,
    passage_count: 2,
    progress: 1,
    metadata: {},
    error: null,
    created_at: EPOCH,
    updated_at: EPOCH,
    ...overrides,
    sandbox: true,
  };
}

export function sandboxUpload(input: {
  originalName: string;
  fileType: FileType;
  mimeType: string;
  sizeBytes: number;
  metadata: FileMetadata | undefined;
}) {
  return sandboxFile({
    original_name: input.originalName,
    file_type: input.fileType,
    mime_type: input.mimeType,
    size_bytes: input.sizeBytes,
    metadata: input.metadata ?? {},
  });
}

/** Whether the sandbox's example file passes a filter (test keys' lists and searches honour filters too). */
export function sandboxFilePasses(filter: FileFilter | undefined): boolean {
  const file = sandboxFile();
  return fileMatchesFilter(
    { id: file.id, fileType: file.file_type, createdAt: file.created_at, metadata: file.metadata },
    filter,
  );
}

type SearchParams = Pick<Input<typeof search>, "q" | "limit" | "mode" | "offset">;

export function sandboxSearch(params: SearchParams & { filter?: FileFilter | undefined }): SearchResponseDto {
  const files = { original_name: SANDBOX_FILE_NAME, file_type: "pdf" as const };
  const query = queryWords(params.q);
  // The query's words are highlighted as a live search would: found by the same matching.
  const highlighted = (content: string) => ({
    content,
    highlights: toCodePoints(content, matchedWords(content, query)),
  });
  const results = [
    {
      ...highlighted(
        `Sandbox passage matching "${params.q}". Test keys answer at once with mock data; use a live key to search your files.`,
      ),
      score: 0.92,
      file_id: SANDBOX_FILE_ID,
      locator: {
        page: 1,
        line: 3,
        line_end: 5,
        bbox: sandboxLinesBox(3, 5),
        source: "text" as const,
      },
      files,
    },
    {
      ...highlighted(`A second sandbox passage for "${params.q}", on another page.`),
      score: 0.71,
      file_id: SANDBOX_FILE_ID,
      locator: {
        page: 1,
        line: 8,
        line_end: 9,
        bbox: sandboxLinesBox(8, 9),
        source: "text" as const,
      },
      files,
    },
  ];
  // Paged and filtered like a live search, over the example file's two passages.
  const found = sandboxFilePasses(params.filter) ? results : [];
  const page = found.slice(params.offset, params.offset + params.limit);
  const more =
    found.length > params.offset + params.limit && params.offset + params.limit <= SEARCH_LIMITS.offsetMax;
  const response: SearchResponseDto = {
    results: page,
    count: page.length,
    ...nextPosition(more ? params.offset + params.limit : null),
    mode: params.mode,
    sandbox: true,
  };
  if (params.mode !== "ai") return response;
  if (params.offset > 0) return { ...response, vector_source: "sandbox" };
  // Shaped like a live ai answer: one marker per citation, each pointing at a returned result.
  const markers = page.map((_, i) => `[${i + 1}]`).join("");
  return {
    ...response,
    summary:
      page.length === 0
        ? `Sandbox summary for "${params.q}": no file matches the filter.`
        : `Sandbox summary for "${params.q}": the example document mentions it ${page.length === 1 ? "once" : "twice"} ${markers}.`,
    citations: page.map((r, i) => ({
      n: i + 1,
      file_id: r.file_id,
      original_name: r.files.original_name,
      locator: r.locator,
      quote: r.content,
      result_index: i,
    })),
    answered: page.length > 0,
    summary_source: "sandbox",
    vector_source: "sandbox",
  };
}

/** The layout of the sandbox PDF (points): a US Letter page, 14-point lines 22 points apart. */
const PAGE = { width: 612, height: 792, margin: 72, firstBaseline: 720, fontSize: 14, leading: 22 };

/** Where lines `first`..`last` of the sandbox page's layout are, as a live text result's `bbox`. */
function sandboxLinesBox(first: number, last: number) {
  const baseline = (line: number) => PAGE.height - (PAGE.firstBaseline - (line - 1) * PAGE.leading);
  const top = baseline(first) - 0.9 * PAGE.fontSize;
  const bottom = baseline(last) + 0.25 * PAGE.fontSize;
  return publicBox({ x: PAGE.margin, y: top, width: PAGE.width - 2 * PAGE.margin, height: bottom - top });
}

/** A one-page PDF that sandbox preview links serve, built once from a few lines of PDF syntax. */
function minimalPdf(lines: string[]): Buffer {
  const text = lines
    .map(
      (l, i) =>
        `BT /F1 ${PAGE.fontSize} Tf ${PAGE.margin} ${PAGE.firstBaseline - i * PAGE.leading} Td (${l.replace(/[()\\]/g, "\\$&")}) Tj ET`,
    )
    .join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE.width} ${PAGE.height}] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>`,
    `<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(body));
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  body += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, "latin1");
}

const SAMPLE_LINES = [
  "Locus sandbox preview",
  "Test keys return this example document.",
  "Use a live key to preview your own files.",
];

export const SAMPLE_PDF = minimalPdf(SAMPLE_LINES);

/** The example document's passages, as a live file's text would page through them. */
export function sandboxPassages(page: { offset: number; limit: number }): FilePassagesDto {
  const passages = SAMPLE_LINES.map((text, i) => ({
    content: text,
    locator: {
      page: 1,
      line: i + 1,
      line_end: i + 1,
      bbox: sandboxLinesBox(i + 1, i + 1),
      source: "text" as const,
    },
  }));
  const end = page.offset + page.limit;
  return {
    passages: passages.slice(page.offset, end),
    ...nextPosition(end < passages.length ? end : null),
    sandbox: true,
  };
}
