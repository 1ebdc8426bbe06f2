/**
 * BM25 as every backend ranks with it: SQLite FTS5's `bm25()` formula and parameters, so the
 * PostgreSQL index (which computes it in SQL) and the SQLite index (FTS5's own) give a passage the
 * same score from the same statistics. Elasticsearch's BM25 uses the same k1 and b, but its own idf
 * (Lucene's, never negative) and its shard's statistics.
 *
 *   score = Σ over query terms of idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·length / avgLength))
 *   idf(t) = ln((N − n + 0.5) / (n + 0.5)), or IDF_FLOOR where that is not above 0
 *
 * where tf is how often the term occurs in the passage, length the passage's terms, avgLength the
 * mean over the user's passages, N the user's passages and n those holding the term.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** FTS5 gives a term in more than half of the passages this idf instead of a negative one. */
export const BM25_IDF_FLOOR = 1e-6;

/** A user's statistics for one query: what BM25 needs beyond the passage itself. */
export interface Bm25Statistics {
  /** The user's passages. */
  passages: number;
  /** Their terms in all (with repeats): the mean passage length is terms / passages. */
  terms: number;
  /** For each query term, the user's passages holding it. */
  passagesWith: ReadonlyMap<string, number>;
}

export function bm25Idf(passages: number, withTerm: number): number {
  const idf = Math.log((Math.max(passages - withTerm, 0) + 0.5) / (withTerm + 0.5));
  return idf > 0 ? idf : BM25_IDF_FLOOR;
}

/**
 * A passage's score for `terms` (distinct), given how often each occurs in it (`frequency`) and its
 * length in terms.
 */
export function bm25Score(
  terms: readonly string[],
  frequency: (term: string) => number,
  length: number,
  stats: Bm25Statistics,
): number {
  const avgLength = stats.passages > 0 ? stats.terms / stats.passages : 0;
  const norm = BM25_K1 * (1 - BM25_B + (avgLength > 0 ? (BM25_B * length) / avgLength : 0));
  let score = 0;
  for (const term of terms) {
    const tf = frequency(term);
    if (tf <= 0) continue;
    score += (bm25Idf(stats.passages, stats.passagesWith.get(term) ?? 0) * tf * (BM25_K1 + 1)) / (tf + norm);
  }
  return score;
}
