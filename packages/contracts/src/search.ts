import { z } from "zod";
import { FileType } from "./files.ts";
import { Locator } from "./locator.ts";

export const SearchMode = z.enum(["quick", "ai"]);
export type SearchMode = z.infer<typeof SearchMode>;

/** Limits of the search parameters; the gateway validates them and /openapi.json states them. */
export const SEARCH_LIMITS = {
  qMinLength: 1,
  qMaxLength: 1000,
  limitMin: 1,
  limitMax: 100,
  limitDefault: 50,
} as const;

/**
 * Where a result's `content` shows why it matched: a word of the query (both modes), or in ai
 * mode, for a passage found by meaning alone, the sentence closest to the question. Offsets
 * count Unicode code points of `content` (Python: `content[start:end]`; JavaScript:
 * `Array.from(content).slice(start, end).join("")`), `end` exclusive.
 */
export const HighlightDto = z.object({
  start: z.number().int().min(0),
  end: z.number().int().min(0),
});
export type HighlightDto = z.infer<typeof HighlightDto>;

export const SearchResultDto = z.object({
  content: z.string(),
  score: z.number().min(0).max(1),
  file_id: z.string(),
  locator: Locator,
  files: z.object({ original_name: z.string(), file_type: FileType }),
  /** What in `content` matched, in order (may be empty). */
  highlights: z.array(HighlightDto),
});
export type SearchResultDto = z.infer<typeof SearchResultDto>;

/** One place a marker [n] of an ai summary cites: the result, and the words quoted from it (a marker whose sentence is in several files has one per place). */
export const CitationDto = z.object({
  n: z.number().int().min(1),
  file_id: z.string(),
  original_name: z.string(),
  /** Where the quote is: the cited result's locator, narrowed to the quoted sentence's lines when known. */
  locator: Locator,
  quote: z.string(),
  /** Position of the cited result in `results` (from 0). */
  result_index: z.number().int().min(0),
});
export type CitationDto = z.infer<typeof CitationDto>;

/** A remote AI engine that failed during this search, and what answered instead. */
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
  count: z.number().int().min(0),
  mode: SearchMode,
  sandbox: z.literal(true).optional(),
  // ai mode only:
  summary: z.string().optional(),
  citations: z.array(CitationDto).optional(),
  /** False when the documents do not answer the question (the summary says so and cites nothing). */
  answered: z.boolean().optional(),
  /** What wrote the summary: "local", a model's name, or "sandbox". */
  summary_source: z.string().optional(),
  /** What made the question's vector: "local", a model's name, or "sandbox". */
  vector_source: z.string().optional(),
  fallbacks: z.array(AiFallbackDto).optional(),
});
export type SearchResponseDto = z.infer<typeof SearchResponseDto>;
