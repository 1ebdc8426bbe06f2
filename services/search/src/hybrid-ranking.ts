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
 * Measured again on the dev paraphrases among 100,000 real-text passages (bench/ai-tune.ts,
 * hit@1/5/50): equal weights 0/1/9, the vectors weighted 1.5 0/2/11, 2 0/3/12 (K = 60: no
 * better); but the hand-written questions on real manuals (bench/ai-answers.ts --set dev) fell
 * from 15/20 in the top five to 14 and 13, so the lists stay equal.
 */
const K = 20;

/**
 * A passage found only by its vector, less similar than this to the question, is left out: every
 * passage has some nearest neighbour, and without a floor an unrelated question would still fill
 * the results. Chosen from the paraphrase set: unrelated pairs sit at a median of 0.05–0.1, answers
 * at 0.55 (the lowest 0.11).
 */
export const MIN_VECTOR_SCORE = 0.15;

export interface FusedHit {
  hit: PassageHit;
  score: number;
}

export function fuse(lists: readonly (readonly PassageHit[])[]): FusedHit[] {
  const used = lists.filter((l) => l.length > 0);
  if (used.length === 0) return [];
  const best = used.length / (K + 1);
  const fused = new Map<string, FusedHit & { first: number }>();
  used.forEach((list, l) => {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.id);
      const add = 1 / (K + rank + 1);
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
 * below MIN_VECTOR_SCORE left out, fused by reciprocal rank. SearchService ranks with it, and
 * bench/ai-tune.ts measures it, so the tuning figure is the product's.
 */
export function rankAi(keyword: readonly PassageHit[], semantic: readonly PassageHit[]): FusedHit[] {
  return fuse([keyword, semantic.filter((h) => h.score >= MIN_VECTOR_SCORE)]);
}
