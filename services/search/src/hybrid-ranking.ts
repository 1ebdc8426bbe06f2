import type { VectorMatching } from "@locus/embedder";
import { matchedWords, queryWords, type QueryWords } from "@locus/passages";
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
 * K (the rank constant) and how much the vector list counts are the engine's (VectorMatching),
 * set on development questions beside each engine's setting. For the word vectors K = 20 rather
 * than the paper's 60: a smaller K lets a passage near the top of one list count for more against
 * one that is middling in both. Measured on the benchmark's corpus (30 paraphrased questions and
 * 30 one-word keyword queries among 50,000 distractor passages), K = 20 put 18 paraphrases and 28
 * keywords in the top five, K = 60 17 and 26; weighting their vector list above the keyword one
 * won a paraphrase and lost two keywords. The sentence encoder's nearest passages are right far
 * more often: its list counts three times the keywords', and K = 2 keeps its first place first.
 */
export interface FusedHit {
  hit: PassageHit;
  score: number;
}

/** `weights`: what each list's votes count (1 each unless given); `k`: the rank constant. */
export function fuse(
  lists: readonly (readonly PassageHit[])[],
  weights: readonly number[] | undefined,
  k: number,
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
 * ai mode's ranking: the keyword (BM25) hits, the question's nearest passages by vector (those
 * below the engine's floor left out) and the keyword hits that hold every word of the query, fused
 * by reciprocal rank with the engine's weight on the vectors (VectorMatching: each engine's are set
 * on development questions). SearchService ranks with it, and bench/ai/ai-tune.ts measures it, so the
 * tuning figure is the product's.
 *
 * The third list is what a user who types a few exact words in ai mode expects: the passage that
 * has all of them. It counts as much as the vectors do, so such a passage near the top of BM25 is
 * not pushed down by passages merely close in meaning (an encoder weighted three times the
 * keywords did that to 19 of 36 three-word line queries on real manuals). A query of one word is
 * held whole by every keyword hit: the list then weights BM25 up, which a user typing one word
 * means as well (a word the manuals print once came first for 8 of 11 such queries, 4 without).
 */
export function rankAi(
  question: string,
  keyword: readonly PassageHit[],
  semantic: readonly PassageHit[],
  matching: VectorMatching,
): FusedHit[] {
  const query = queryWords(question);
  const whole = keyword.filter((hit) => holdsEvery(hit.content, query));
  return fuse(
    [keyword, semantic.filter((h) => h.score >= matching.floor), whole],
    [1, matching.weight, matching.weight],
    matching.rankConstant,
  );
}

/** Whether the text has a word of every one of the query's stems (none: false). */
function holdsEvery(text: string, query: QueryWords): boolean {
  if (query.stems.size === 0) return false;
  const found = new Set(matchedWords(text, query).map((w) => w.stem));
  return found.size === query.stems.size;
}
