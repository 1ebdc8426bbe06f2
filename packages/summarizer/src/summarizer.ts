/** A passage the summary may cite: one of the search results, numbered from 1 in their order. */
export interface CitablePassage {
  /** 1-based; the number the engine is shown and cites as [n]. */
  n: number;
  fileName: string;
  /** The file's id: passages of one file share it (names may repeat across files). */
  fileId?: string;
  content: string;
}

/**
 * One citation of a summary: which passage, and the words of it that support the claim. A marker
 * whose words were found in several files has one citation per place, all with its `n`.
 */
export interface SummaryCitation {
  /** The marker's number in the summary text, 1, 2, 3… in order of first appearance. */
  n: number;
  /** The cited passage's `n` (its position among the passages given, from 1). */
  passage: number;
  /** Words of the passage the claim rests on: a sentence of it, or the whole passage. */
  quote: string;
  /** Lines of the passage's content the quote spans (0-based, inclusive), when known. */
  lines?: { first: number; last: number };
}

export interface Summary {
  /** A few sentences with markers [1], [2]… Each marker has one entry in `citations`. */
  text: string;
  citations: SummaryCitation[];
  /** False when the passages do not answer the question (the text then says so, citing nothing). */
  answered: boolean;
  /** What wrote it: "local" or the model's name. */
  source: string;
}

/**
 * Writes a short answer to a question from the passages search found, citing them. An engine may
 * cite only the passages it was given: markers that name anything else are dropped, and the
 * locators of citations always come from the passages, never from the engine.
 */
export interface Summarizer {
  readonly name: string;
  summarize(question: string, passages: readonly CitablePassage[], signal?: AbortSignal): Promise<Summary>;
}

/** Like EmbedderError: `message` for the log, `reason` (Locus's own words) for the client. */
export class SummarizerError extends Error {
  readonly reason: string;

  constructor(message: string, options?: { cause?: unknown; reason?: string }) {
    super(message, options);
    this.name = "SummarizerError";
    this.reason = options?.reason ?? message;
  }
}

/** What a summary says when the passages do not answer the question. */
export const NO_ANSWER =
  "The documents searched do not seem to answer this question; the closest passages are listed in the results.";

export const noAnswer = (source: string): Summary => ({
  text: NO_ANSWER,
  citations: [],
  answered: false,
  source,
});
