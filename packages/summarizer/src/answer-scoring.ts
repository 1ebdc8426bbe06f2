import { isStopWord, stem, words } from "@locus/passages";

/**
 * What kind of answer a question's first words ask for. A sentence that has that kind of thing in
 * it (a number for "how many", a reason for "why") is more likely the answer than one that only
 * shares the topic.
 */
export type AnswerCue = "number" | "time" | "name" | "reason";

export interface AskedQuestion {
  /** The question's content words by stem: the word as asked, and how much it counts (rare words more). */
  terms: Map<string, { word: string; weight: number }>;
  cue: AnswerCue | undefined;
}

/**
 * Words that ask rather than say what about: a sentence does not need them to answer. The shared
 * stop words (see @locus/passages) are left out as well.
 */
const ASKING = new Set(
  (
    "how why where whom whose which what when who should must would could shall might me my mine " +
    "please tell know does do did get possible way ways"
  ).split(" "),
);

const CUES: readonly [RegExp, AnswerCue][] = [
  [/^\s*how\s+(many|much|long|often|old|far|big|large|small|likely|fast|soon|frequently)\b/i, "number"],
  [/^\s*what\s+(percentage|proportion|share|number|amount|size|fraction)\b/i, "number"],
  [/^\s*(when|until when|since when)\b|^\s*what\s+(time|date|day|year|month)\b/i, "time"],
  [/^\s*(who|whom|whose)\b|^\s*which\s+(person|people|company|organi[sz]ation|author)\b/i, "name"],
  [/^\s*why\b|^\s*what\s+(is|was|are|were)\s+the\s+reasons?\b/i, "reason"],
];

const NUMBER =
  /\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|sixty|hundred|thousand|million|billion|half|twice|once|dozen|percent)\b/i;
const TIME =
  /\d|\b(before|after|until|once|whenever|during|while|daily|weekly|monthly|yearly|annually|morning|evening|night|today|tomorrow|yesterday|day|week|month|year|hour|minute|second)s?\b/i;
/** A capitalised word after the sentence's first: a name, a place, an organisation. */
const NAME = /\s["'“(]?\p{Lu}\p{Ll}+/u;
const REASON =
  /\b(because|since|so that|in order to|due to|thanks to|owing to|as a result|therefore|thus|hence|reasons?|caused?|leads? to|so as to|to avoid|to prevent|to allow|to ensure|to make)\b/i;

const CUE_TESTS: Record<AnswerCue, RegExp> = { number: NUMBER, time: TIME, name: NAME, reason: REASON };

/**
 * The question's content words and cue. `weight` says how much a word counts, from 0 (says
 * nothing, like "the") to 1 (rare): the embedder's frequency weight; a word it does not know (a
 * name, an identifier such as FC_LANG) is rare and counts fully.
 */
export function askedQuestion(question: string, weight: (word: string) => number): AskedQuestion {
  const terms = new Map<string, { word: string; weight: number }>();
  for (const word of words(question)) {
    if (isStopWord(word) || ASKING.has(word)) continue;
    const w = weight(word) || 1;
    const stemmed = stem(word);
    if ((terms.get(stemmed)?.weight ?? 0) < w) terms.set(stemmed, { word, weight: w });
  }
  const cue = CUES.find(([pattern]) => pattern.test(question))?.[1];
  return { terms, cue };
}

/** Word vectors for matching a question's word by meaning (see coverage): unit length, centred. */
export type WordVectorOf = (word: string) => Float32Array | undefined;

/** A word of the sentence this close in meaning to a question's word counts as having it, in part. */
const NEAR_WORD = 0.5;

/** What a sentence has of a question (see coverage). */
export interface SentenceMatch {
  /** The share of the question's content (by weight) the sentence has, 0 to 1. */
  share: number;
  /**
   * The question's words it has as they are (by stem), each with its share of the question's
   * weight: what it answers of the question, to tell a sentence that answers another part of it
   * from one that says the same again.
   */
  terms: Map<string, number>;
}

/**
 * How much of the question the sentence has. A word counts fully when the sentence has its stem,
 * and by its likeness when the sentence has a word close in meaning (cosine of their word vectors
 * at least NEAR_WORD: "licence" for "license", "copy" for "copies", "money" for "refund"), so a
 * question in other words than the document's still finds the sentence that answers it.
 */
export function coverage(asked: AskedQuestion, sentence: string, vectorOf?: WordVectorOf): SentenceMatch {
  const terms = new Map<string, number>();
  let total = 0;
  for (const t of asked.terms.values()) total += t.weight;
  if (total === 0) return { share: 0, terms };
  const said = words(sentence).filter((w) => !isStopWord(w));
  const have = new Set(said.map(stem));
  let share = 0;
  for (const [term, { word, weight }] of asked.terms) {
    if (have.has(term)) {
      terms.set(term, weight / total);
      share += weight / total;
    } else if (vectorOf) share += (weight / total) * nearest(word, said, vectorOf);
  }
  return { share, terms };
}

/**
 * Words this close in meaning are about the same thing, though one could not stand for the other
 * ("injection" and "vaccine"): such a word in a passage means the question's word is not unseen.
 * On the dev questions 0.4 beat 0.3 (which found a relative for nearly every word in a manual) and
 * 0.5 (which lost paraphrases).
 */
const RELATED_WORD = 0.4;

/** The likeness of the word closest in meaning to `word` among `others`, 0 below `floor`. */
function nearest(word: string, others: readonly string[], vectorOf: WordVectorOf, floor = NEAR_WORD): number {
  const mine = vectorOf(word);
  if (!mine) return 0;
  let best = 0;
  for (const other of others) {
    const theirs = vectorOf(other);
    if (!theirs) continue;
    let similarity = 0;
    for (let k = 0; k < mine.length; k++) similarity += (mine[k] ?? 0) * (theirs[k] ?? 0);
    if (similarity > best) best = similarity;
  }
  return best >= floor ? best : 0;
}

/** Whether the sentence has the kind of thing the question's cue asks for. */
export const meetsCue = (asked: AskedQuestion, sentence: string): boolean =>
  asked.cue !== undefined && CUE_TESTS[asked.cue].test(sentence);

const FULL_STOP = /[.!?]["'”’)\]]*$/;
/** A section number and a heading run into the sentence: "3.1 Invoking asn1Parser asn1Parser reads…". */
const NUMBERED_START = /^\d+(\.\d+)*\.?\s+\p{Lu}/u;
/** Characters of code and markup: brackets, operators, sigils. */
const CODE = /[{}()[\];=<>_\\|#$*&^~`@]|::|->/g;

/**
 * How far a sentence is from prose, as a penalty from 0 (prose) to 0.5: mostly symbols or digits
 * (formulas, tables of numbers), almost no function words (table cells, lists of names, headings),
 * code, and, in text that has punctuation at all (`punctuated`: a document, not a transcript), no
 * full stop at the end (a heading, or a sentence cut off) or a small letter at the start (the
 * middle of a sentence). Measured in characters and words, so it needs no language model.
 */
export function notProse(sentence: string, punctuated: boolean): number {
  const chars = sentence.replace(/\s/g, "");
  const letters = chars.match(/\p{L}/gu)?.length ?? 0;
  const letterShare = letters / Math.max(1, chars.length);
  const all = words(sentence);
  const count = Math.max(1, all.length);
  let penalty = 0;
  if (letterShare < 0.8) penalty += Math.min(0.3, (0.8 - letterShare) * 1.5);
  if (all.length >= 6 && all.filter(isStopWord).length / count < 0.15) penalty += 0.15;
  if ((sentence.match(CODE)?.length ?? 0) / count > 0.2) penalty += 0.15;
  // Capitalised words after the first, a quarter of them or more: table cells ("String", "Int"), a
  // list of names or titles, a heading run into the text.
  const capitalised = sentence
    .split(/\s+/)
    .slice(1)
    .filter((w) => /^["'“(]?\p{Lu}/u.test(w)).length;
  if (all.length >= 6 && capitalised / count >= 0.25) penalty += 0.1;
  if (NUMBERED_START.test(sentence)) penalty += 0.1;
  if (punctuated) {
    if (!FULL_STOP.test(sentence)) penalty += 0.1;
    if (/^\p{Ll}/u.test(sentence)) penalty += 0.1;
  }
  if (all.length > 60) penalty += 0.1;
  return Math.min(0.5, penalty);
}

/**
 * The question's words weighed against the passages found. A word in most of them is the
 * documents' topic (a program's name in its own manual): every sentence around has it and none
 * answers by it, so it counts a third. `unseen` is the share (by weight) of the question's words
 * in no passage at all: what the question asks about that the documents never mention ("WOFF2",
 * "sourdough"), the sign of a question they do not answer.
 */
export function focusOn(
  asked: AskedQuestion,
  passages: readonly string[],
  vectorOf?: WordVectorOf,
): { asked: AskedQuestion; unseen: number } {
  const stemsOf = passages.map((p) => new Set(words(p).map(stem)));
  const said = [...new Set(passages.flatMap((p) => words(p).filter((w) => !isStopWord(w))))];
  const terms = new Map<string, { word: string; weight: number }>();
  let total = 0;
  let unseen = 0;
  for (const [term, { word, weight }] of asked.terms) {
    const share = stemsOf.filter((s) => s.has(term)).length / Math.max(1, passages.length);
    total += weight;
    // Unseen: neither the word nor one near it in meaning ("injection" for "vaccine") is there.
    if (share === 0 && !(vectorOf && nearest(word, said, vectorOf, RELATED_WORD) > 0)) unseen += weight;
    terms.set(term, { word, weight: passages.length >= 3 && share >= 0.6 ? weight / 3 : weight });
  }
  return { asked: { ...asked, terms }, unseen: total > 0 ? unseen / total : 0 };
}
