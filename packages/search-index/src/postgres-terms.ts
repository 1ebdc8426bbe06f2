// A passage's terms as the table keeps them: a tsvector literal, a length and the repeated terms.

import { indexTerms, type IndexedPassage } from "./search-index.ts";

/** A term quoted as a tsvector or tsquery lexeme (terms hold no quote or backslash; escaped anyway). */
export const lexeme = (term: string) => `'${term.replace(/['\\]/g, "\\$&")}'`;

/** Postgres keeps at most this many positions of one lexeme, and positions up to 16,383. */
const MAX_POSITIONS = 256;
const MAX_POSITION = 16_383;

/** A passage's terms as the table keeps them. */
export interface Terms {
  /** Each distinct term with the positions (from 1) it occurs at, as a tsvector literal. */
  tsv: string;
  /** How many terms the passage has, repeats included: its length for BM25. */
  count: number;
  /** The terms it holds more than once, with their counts, as a JSON object; null if none. */
  repeats: string | null;
}

export function termsOf(content: string): Terms {
  const terms = indexTerms(content);
  // Per term: how often it occurs, and the first MAX_POSITIONS places.
  const seen = new Map<string, { n: number; at: number[] }>();
  terms.forEach((term, i) => {
    const entry = seen.get(term);
    if (entry === undefined) seen.set(term, { n: 1, at: [Math.min(i + 1, MAX_POSITION)] });
    else if (++entry.n <= MAX_POSITIONS) entry.at.push(Math.min(i + 1, MAX_POSITION));
  });
  let tsv = "";
  let repeats: Record<string, number> | null = null;
  for (const [term, { n, at }] of seen) {
    tsv += `${tsv === "" ? "" : " "}${lexeme(term)}:${at.join(",")}`;
    if (n > 1) (repeats ??= {})[term] = n;
  }
  return { tsv, count: terms.length, repeats: repeats === null ? null : JSON.stringify(repeats) };
}

export type PassageTerms = Terms & { passage: IndexedPassage };
