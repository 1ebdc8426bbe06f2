import type { VectorMatching } from "@locus/embedder";
import type { PassageHit } from "@locus/search-index";

/**
 * Reciprocal-rank fusion (Cormack, Clarke and Büttcher 2009): each list gives a passage
 * 1 / (K + rank), and passages are ordered by the sum. It needs no calibration between BM25
 * scores and cosine similarities (which live on unrelated scales), and a passage near the top of
 * either list ranks high, so keyword matches and paraphrases both come through.
 *
 * The fused score is divided by its best possible value (first in every list), so it lies in
 * (0, 1] and 1 means "first by every measure".
 *
 * K = 20 rather than the paper's 60: a smaller K lets a passage near the top of one list count
 * for more against one that is middling in both. Measured on the benchmark's corpus (30
 * paraphrased questions and 30 one-word keyword queries among 50,000 distractor passages), K = 20
 * put 18 paraphrases and 28 keywords in the top five, K = 60 17 and 26; weighting the vector
 * list above the keyword one won a paraphrase and lost two keywords.
 *
 * How much the vector list counts is the engine's (VectorMatching.weight): equal for the word
 * vectors, whose paraphrase gains cost hand-written questions on real manuals; three times the
 * keywords' for the sentence encoder, whose nearest passages are right far more often (the
 * measurements are beside each engine's setting). With the encoder, K = 10 and K = 20 did the
 * same on the dev paraphrases (23 and 22 of 30 in the top five), K = 60 worse (15 at weight 3).
 */
const K = 20;

export interface FusedHit {
  hit: PassageHit;
  score: number;
}

/** `weights`: what each list's votes count (1 each unless given). */
export function fuse(
  lists: readonly (readonly PassageHit[])[],
  weights?: readonly number[],
  k = K,
): FusedHit[] {
  const used = lists.flatMap((list, l) => (list.length > 0 ? [{ list, weight: weights?.[l] ?? 1 }] : []));
  if (used.length === 0) return [];
  const best = used.reduce((sum, u) => sum + u.weight, 0) / (k + 1);
  const fused = new Map<string, FusedHit & { first: number }>();
  used.forEach(({ list, weight }, l) => {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.id);
      const add = weight / (k + rank + 1);
      // Ties break towards the list given first (keyword), then by rank there: stable results.
      const order = l * 100_000 + rank;
      if (entry) {
        entry.score += add;
        entry.first = Math.min(entry.first, order);
      } else fused.set(hit.id, { hit, score: add, first: order });
    });
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map(({ hit, score }) => ({ hit, score: Math.min(1, score / best) }));
}

/**
 * ai mode's ranking: the keyword (BM25) hits and the question's nearest passages by vector, those
 * below the engine's floor left out, fused by reciprocal rank with the engine's weight on the
 * vectors (VectorMatching: each engine's are set on development questions). SearchService ranks
 * with it, and bench/ai-tune.ts measures it, so the tuning figure is the product's.
 */
export function rankAi(
  keyword: readonly PassageHit[],
  semantic: readonly PassageHit[],
  matching: VectorMatching,
): FusedHit[] {
  return fuse([keyword, semantic.filter((h) => h.score >= matching.floor)], [1, matching.weight]);
}
