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

export const SearchResultDto = z.object({
  content: z.string(),
  score: z.number().min(0).max(1),
  file_id: z.string(),
  locator: Locator,
  files: z.object({ original_name: z.string(), file_type: FileType }),
});
export type SearchResultDto = z.infer<typeof SearchResultDto>;

export const SearchResponseDto = z.object({
  results: z.array(SearchResultDto),
  count: z.number().int().min(0),
  mode: SearchMode,
  sandbox: z.literal(true).optional(),
});
export type SearchResponseDto = z.infer<typeof SearchResponseDto>;
