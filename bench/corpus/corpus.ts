/**
 * Deterministic English-like text: a vocabulary of a few thousand words drawn with a Zipf-like
 * distribution (as word frequencies in real text are), cut into sentences and ~300-character
 * passages of a few lines each, like the PDF extractor makes. Everything comes from a seeded
 * generator, so every run indexes and searches the same corpus.
 */

import { seededRandom } from "../harness/deps.ts";

/** The seeded generator every benchmark draws from (mulberry32, shared with the tests). */
export const rng = seededRandom;

export const pick = <T>(random: () => number, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)]!;

/** Real English words, most frequent first; the rest of the vocabulary is made of syllables. */
const ENGLISH = `the of and to a in is that for it as was with be by on not he this are or his from at
which but have an they you were had she all one their there been has we more would her when will
who so no if out up said what its about into than them can only other new some could time these
two may then do first any my now such like our over man me even most made after also did many
before must through back years where much your way well down should because each just those
people how too little state good very make world still own see men work long get here between
both life being under never day same another know while last might us great old year off come
since against go came right used take three report contract revenue quarter market customer
service product price cost value policy system process data account payment invoice budget
company business management project team office staff meeting board committee agreement
section clause party parties notice period term date amount total balance share growth risk
income expense tax audit review plan strategy sales order supply delivery schedule quality
standard security access record document file page table figure chart summary analysis result
research study method sample test measure level rate change increase decrease support
development program community health care patient hospital school student teacher course
science energy water power oil gas carbon climate weather temperature region country city
government law court case judge legal rights public private federal national local office
director president chairman manager employee worker union labor wage salary benefit pension
insurance claim loss profit capital asset liability equity debt loan interest bank fund
investment investor shareholder dividend stock bond security exchange trade export import
industry sector technology software network computer internet device hardware platform
application user interface design engineering construction building property land house home
family child parent woman age population history culture art music film book story paper
article letter email message question answer problem issue solution option decision reason
effect cause impact factor condition situation position role function purpose goal target
practice experience knowledge information evidence example detail point area field line
group member list range series set type form kind sort part piece unit item element feature
model version release update upgrade install configure deploy monitor maintain repair replace
provide require include consider continue develop create produce receive remain suggest
describe explain discuss identify determine establish maintain improve reduce prevent protect
approve reject accept request submit complete prepare publish announce confirm expect intend
annual monthly weekly daily early late recent current previous future final initial major
minor general specific particular special common simple complex clear certain possible likely
available necessary important significant relevant effective efficient strong weak high low
large small full empty open closed free fair real true false whole main central primary`;

const ONSETS = [
  "b",
  "br",
  "c",
  "ch",
  "cl",
  "d",
  "dr",
  "f",
  "fl",
  "g",
  "gr",
  "h",
  "j",
  "k",
  "l",
  "m",
  "n",
  "p",
  "pl",
  "pr",
  "r",
  "s",
  "sh",
  "sl",
  "st",
  "t",
  "th",
  "tr",
  "v",
  "w",
];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "ou"];
const CODAS = ["", "", "n", "r", "l", "s", "t", "nd", "rt", "st", "ck", "m", "ng"];
const SUFFIXES = ["", "", "", "", "er", "ing", "ed", "ion", "al", "ity", "ment", "ness", "ous", "ive"];

/** Words planted as phrases and absent words: they must not be in the vocabulary. */
export const PLANTED_PHRASES = [
  "obsidian lighthouse covenant",
  "saffron turbine escrow",
  "glacier mortgage addendum",
  "copper hummingbird tribunal",
] as const;
export const ABSENT_WORDS = ["xylofrond", "quembrizzle", "vortaplexium", "zindrakulth"] as const;

export interface Vocabulary {
  words: string[];
  /** Cumulative Zipf weights, for sampling by binary search. */
  cumulative: Float64Array;
}

/** `size` distinct words, English first, with Zipf weights 1/rank^exponent. */
export function buildVocabulary(size: number, seed = 1, exponent = 1.05): Vocabulary {
  const reserved = new Set([...PLANTED_PHRASES.flatMap((p) => p.split(" ")), ...ABSENT_WORDS]);
  const seen = new Set<string>();
  const words: string[] = [];
  for (const w of ENGLISH.split(/\s+/)) {
    if (w && !seen.has(w) && !reserved.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  const random = rng(seed);
  while (words.length < size) {
    const u = random();
    const syllables = u < 0.45 ? 1 : u < 0.85 ? 2 : 3;
    let w = "";
    for (let s = 0; s < syllables; s++) w += pick(random, ONSETS) + pick(random, VOWELS);
    w += pick(random, CODAS) + pick(random, SUFFIXES);
    if (w.length < 3 || seen.has(w) || reserved.has(w)) continue;
    seen.add(w);
    words.push(w);
  }
  words.length = size;
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let r = 0; r < size; r++) {
    total += 1 / (r + 1) ** exponent;
    cumulative[r] = total;
  }
  for (let r = 0; r < size; r++) cumulative[r]! /= total;
  return { words, cumulative };
}

export function sampleWord(vocab: Vocabulary, random: () => number): string {
  const u = random();
  let lo = 0;
  let hi = vocab.cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (vocab.cumulative[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return vocab.words[lo]!;
}

/** One sentence of 6 to 16 Zipf-drawn words, capitalised, with a full stop (sometimes a comma). */
function sentence(vocab: Vocabulary, random: () => number): string {
  const n = 6 + Math.floor(random() * 11);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(sampleWord(vocab, random));
  if (n > 9 && random() < 0.4) words[Math.floor(n / 2)] += ",";
  const first = words[0]!;
  words[0] = first[0]!.toUpperCase() + first.slice(1);
  return `${words.join(" ")}.`;
}

/** A line of prose of about `chars` characters (whole words). */
export function proseLine(vocab: Vocabulary, random: () => number, chars: number): string {
  let line = "";
  while (line.length < chars) line += (line ? " " : "") + sentence(vocab, random);
  const cut = line.lastIndexOf(" ", chars);
  return cut > chars / 2 ? line.slice(0, cut) : line;
}

/**
 * A passage of about `targetChars` characters as the PDF extractor makes them: a few lines of
 * ~60 characters, one content line per page line (so line_end - line + 1 lines).
 */
export function passageText(
  vocab: Vocabulary,
  random: () => number,
  targetChars = 300,
  plant?: string,
): string {
  const lines: string[] = [];
  let length = 0;
  // Stop near the target: on average a passage is about targetChars long.
  while (length < targetChars - 30) {
    const line = proseLine(vocab, random, 50 + Math.floor(random() * 20));
    lines.push(line);
    length += line.length + 1;
  }
  if (plant !== undefined) {
    // The phrase goes inside a line, as it would in a real document.
    const i = Math.floor(random() * lines.length);
    const words = lines[i]!.split(" ");
    words.splice(Math.floor(words.length / 2), 0, plant);
    lines[i] = words.join(" ");
  }
  return lines.join("\n");
}
