// Word accuracy of OCR on a known text: shared by the OCR benchmark (ocr.ts) and its real manual
// pages (ocr-real-pages.ts).

/** Words of a known text read right: in its order (as `wordsRight`), and in any order. */
export interface WordsRead {
  words: number;
  inOrder: number;
  anyOrder: number;
}

export const tokens = (text: string) =>
  text
    .split(/\s+/)
    .map((t) => t.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ""))
    .filter(Boolean);

/**
 * Words read right: the length of the best alignment of the read words with the expected ones
 * (matches in a word-level edit-distance alignment), case-sensitive, punctuation around words
 * ignored. Insertions (noise read as words) do not count as right, and do not take any away.
 */
export function wordsRight(expected: string, read: string): number {
  const a = tokens(expected);
  const b = tokens(read);
  // Longest common subsequence of words: what an edit-distance alignment can keep unchanged.
  let prev = new Array<number>(b.length + 1).fill(0);
  for (const word of a) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) {
      row[j] = word === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!);
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** Words of the expected text found in what was read, each once, whatever the order. */
export function wordsFound(expected: string, read: string): number {
  const left = new Map<string, number>();
  for (const word of tokens(read)) left.set(word, (left.get(word) ?? 0) + 1);
  let found = 0;
  for (const word of tokens(expected)) {
    const n = left.get(word) ?? 0;
    if (n > 0) {
      found += 1;
      left.set(word, n - 1);
    }
  }
  return found;
}

export function wordsRead(expected: string, read: string): WordsRead {
  return {
    words: tokens(expected).length,
    inOrder: wordsRight(expected, read),
    anyOrder: wordsFound(expected, read),
  };
}
