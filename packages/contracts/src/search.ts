import { z } from "zod";
import { FileType } from "./files.ts";
import { Locator } from "./locator.ts";
import { NEXT_CURSOR_TEXT } from "./paging.ts";

export const SearchMode = z.enum(["quick", "ai"]);
export type SearchMode = z.infer<typeof SearchMode>;

/** Limits of the search parameters; the gateway validates them and /openapi.json states them. */
export const SEARCH_LIMITS = {
  qMinLength: 1,
  qMaxLength: 1000,
  limitMin: 1,
  limitMax: 100,
  limitDefault: 50,
  /** Paging reaches this deep: results past offsetMax + limitMax are not served (as Elasticsearch's result window). */
  offsetMax: 1000,
  /** At most this many `file_id` values in one filter, and this many `metadata.<key>` conditions. */
  fileIdsMax: 100,
  metadataFiltersMax: 32,
} as const;

export const HighlightDto = z
  .object({
    start: z.number().int().min(0),
    end: z.number().int().min(0),
  })
  .describe(
    "A stretch of a result's `content`: a word that matched the query, or (ai mode, a passage found " +
      "by meaning alone) the sentence closest to the question. Offsets count Unicode code points, " +
      "`end` exclusive: `content[start:end]` in Python, `Array.from(content).slice(start, end).join('')` " +
      "in JavaScript.",
  );
export type HighlightDto = z.infer<typeof HighlightDto>;

export const SearchResultDto = z.object({
  content: z.string(),
  score: z.number().min(0).max(1),
  file_id: z.string(),
  locator: Locator,
  files: z.object({ original_name: z.string(), file_type: FileType }),
  highlights: z.array(HighlightDto).describe("What in `content` matched, in order; may be empty."),
});
export type SearchResultDto = z.infer<typeof SearchResultDto>;

/** One place a marker [n] of an ai summary cites: the result, and the words quoted from it (a marker whose sentence is in several files has one per place). */
export const CitationDto = z.object({
  n: z
    .number()
    .int()
    .min(1)
    .describe("The marker [n] in the summary (repeated when its sentence is found in several places)."),
  file_id: z.string(),
  original_name: z.string(),
  locator: Locator.describe(
    "Where the quote is: the cited result's locator, narrowed to the quoted sentence's lines (which may " +
      "reach a few lines past the result's to finish the sentence).",
  ),
  quote: z.string().describe("The document's words the claim rests on: whole sentences."),
  result_index: z.number().int().min(0).describe("Position of the cited result in `results`."),
});
export type CitationDto = z.infer<typeof CitationDto>;

/** An AI engine that failed during this search or could not load, and what answered instead. */
export const AiFallbackDto = z.object({
  component: z.enum(["embedder", "summarizer"]),
  /** The engine that failed (its model name). */
  engine: z.string(),
  /** The engine used instead. */
  used: z.string(),
  reason: z.string(),
});
export type AiFallbackDto = z.infer<typeof AiFallbackDto>;

export const SearchResponseDto = z.object({
  results: z.array(SearchResultDto),
  count: z.number().int().min(0).describe("Number of results returned (in this page)."),
  next_offset: z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe(
      "The `offset` that asks for the next page of the same search (same `q`, `mode`, filters and " +
        "`limit`), or null when this page is the last. In ai mode only the first page carries the " +
        "summary and citations.",
    ),
  next_cursor: z
    .string()
    .nullable()
    .describe(
      `Extension: the same next page as \`next_offset\`, by the paging rule of every list. ${NEXT_CURSOR_TEXT}`,
    ),
  mode: SearchMode,
  sandbox: z.literal(true).optional(),
  // ai mode only:
  summary: z.string().optional().describe("ai mode: the answer, with citation markers [n]."),
  citations: z
    .array(CitationDto)
    .optional()
    .describe(
      "ai mode: one entry per marker of the summary and place: a sentence found in several files is one " +
        "marker with an entry for each.",
    ),
  answered: z.boolean().optional().describe("ai mode: false when the documents do not answer the question."),
  summary_source: z
    .string()
    .optional()
    .describe(
      "ai mode: what wrote the summary: `local` (sentences picked from the documents, offline), a chat " +
        "model's name, or `sandbox` (a test key's sample).",
    ),
  vector_source: z
    .string()
    .optional()
    .describe(
      "ai mode: what matched the question by meaning: `local` (offline word vectors), " +
        "`all-MiniLM-L6-v2` (the offline sentence encoder), an embedding model's name, or `sandbox`.",
    ),
  fallbacks: z
    .array(AiFallbackDto)
    .optional()
    .describe(
      "ai mode: engines that failed during this search (a remote one) or could not load (the sentence " +
        "encoder without its model files: ai mode is degraded), and what answered instead.",
    ),
});
export type SearchResponseDto = z.infer<typeof SearchResponseDto>;
