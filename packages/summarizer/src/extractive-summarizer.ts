import { dot, type Embedder } from "@locus/embedder";
import { isStopWord, words } from "@locus/passages";
import {
  noAnswer,
  type CitablePassage,
  type Summarizer,
  type Summary,
  type SummaryCitation,
} from "./summarizer.ts";

export interface ExtractiveOptions {
  /** Most sentences in a summary (default 3). */
  maxSentences?: number;
  /** Most characters of summary text, markers included (default 700). */
  maxChars?: number;
  /**
   * Least relevance a sentence needs to be part of an answer (default 0.25). Relevance is
   * 0.7 × cosine similarity to the question + 0.3 × the share of the question's words the sentence
   * has. Measured on the paraphrase set (packages/testing): a sentence that answers its question
   * has a cosine of 0.11–0.81 (median 0.55; 26 of 30 above 0.4); an unrelated one is above 0.33 in
   * 5% of pairs. So a question far from every passage gets "not answered", but one near a related topic
   * (a chess question near a sports passage) gets that passage: telling the two apart needs a
   * language model (the openai summarizer).
   */
  minRelevance?: number;
}

interface Sentence {
  passage: number;
  fileName: string;
  text: string;
  firstLine: number;
  lastLine: number;
  vector: Float32Array;
  relevance: number;
}

/**
 * The offline summary: picks the sentences of the passages that best answer the question and
 * strings them together, each with its citation. It is extractive (every word comes from a
 * document, so it cannot invent anything) and it prefers breadth: each next sentence is chosen for
 * its relevance less its likeness to the sentences already chosen (maximal marginal relevance),
 * with a nudge towards files not yet cited, so an answer spread over several documents draws on
 * several, and overlapping passages never make it say the same thing twice.
 */
export class ExtractiveSummarizer implements Summarizer {
  readonly name = "local";
  private readonly maxSentences: number;
  private readonly maxChars: number;
  private readonly minRelevance: number;

  constructor(
    private readonly embedder: Embedder,
    options: ExtractiveOptions = {},
  ) {
    this.maxSentences = options.maxSentences ?? 3;
    this.maxChars = options.maxChars ?? 700;
    this.minRelevance = options.minRelevance ?? 0.25;
  }

  async summarize(question: string, passages: readonly CitablePassage[]): Promise<Summary> {
    const asked = contentWords(question);
    const pieces = passages.flatMap((p) =>
      sentencesOf(p.content).map((s) => ({ ...s, passage: p.n, fileName: p.fileName })),
    );
    if (pieces.length === 0 || asked.length === 0) return noAnswer(this.name);
    const [questionVector, ...vectors] = await this.embedder.embed([question, ...pieces.map((s) => s.text)]);
    if (!questionVector) return noAnswer(this.name);

    const seen = new Set<string>();
    const sentences: Sentence[] = [];
    pieces.forEach((piece, i) => {
      // Consecutive passages share a line, so one sentence can come twice: keep its first.
      const key = words(piece.text).join(" ");
      const vector = vectors[i];
      if (seen.has(key) || !vector) return;
      seen.add(key);
      const overlap = shareOf(asked, contentWords(piece.text));
      sentences.push({ ...piece, vector, relevance: 0.7 * dot(questionVector, vector) + 0.3 * overlap });
    });

    const chosen: Sentence[] = [];
    const files = new Set<string>();
    let length = 0;
    while (chosen.length < this.maxSentences) {
      let best: Sentence | undefined;
      let bestValue = -Infinity;
      for (const s of sentences) {
        if (chosen.includes(s) || s.relevance < this.minRelevance) continue;
        const likeness = Math.max(0, ...chosen.map((c) => dot(c.vector, s.vector)));
        if (likeness > 0.9) continue;
        const value = s.relevance - 0.5 * likeness + (chosen.length > 0 && !files.has(s.fileName) ? 0.05 : 0);
        if (value > bestValue) {
          best = s;
          bestValue = value;
        }
      }
      if (!best) break;
      const added = best.text.length + 5;
      if (chosen.length > 0 && length + added > this.maxChars) break;
      chosen.push(best);
      files.add(best.fileName);
      length += added;
    }
    if (chosen.length === 0) return noAnswer(this.name);

    const citations: SummaryCitation[] = chosen.map((s, i) => ({
      n: i + 1,
      passage: s.passage,
      quote: s.text,
      lines: { first: s.firstLine, last: s.lastLine },
    }));
    const text = chosen.map((s, i) => withMarker(s.text, i + 1)).join(" ");
    return { text, citations, answered: true, source: this.name };
  }
}

/** "It rose sharply." → "It rose sharply [2]." (the marker inside the sentence's full stop). */
function withMarker(sentence: string, n: number): string {
  const end = /[.!?]+["'”’)\]]*$/.exec(sentence);
  if (!end) return `${sentence} [${n}].`;
  return `${sentence.slice(0, end.index)} [${n}]${sentence.slice(end.index)}`;
}

const SENTENCES = new Intl.Segmenter("en", { granularity: "sentence" });

/**
 * A passage's sentences, with the lines of the passage each one spans. Lines are joined with a
 * space (extraction keeps a document's line breaks, which rarely end sentences), then cut by the
 * Unicode sentence rules (Intl.Segmenter: "3.5 percent" and "e.g. this" stay whole). A fragment of
 * fewer than four words (a heading, the tail of a sentence cut by the passage's first line) says
 * too little to quote.
 */
export function sentencesOf(content: string): { text: string; firstLine: number; lastLine: number }[] {
  const lines = content.split("\n");
  const starts: number[] = [];
  let joined = "";
  for (const line of lines) {
    starts.push(joined.length);
    joined += `${line} `;
  }
  const lineAt = (offset: number) => {
    let line = 0;
    while (line + 1 < starts.length && (starts[line + 1] ?? Infinity) <= offset) line++;
    return line;
  };
  const out: { text: string; firstLine: number; lastLine: number }[] = [];
  for (const { segment, index } of SENTENCES.segment(joined)) {
    const text = segment.replace(/\s+/g, " ").trim();
    if (words(text).length < 4) continue;
    const start = index + (segment.length - segment.trimStart().length);
    const end = index + segment.trimEnd().length - 1;
    out.push({ text, firstLine: lineAt(start), lastLine: lineAt(Math.max(start, end)) });
  }
  return out;
}

/** The words that carry a text's meaning, cut to their first five letters ("profits" = "profit"). */
function contentWords(text: string): string[] {
  return [
    ...new Set(
      words(text)
        .filter((w) => !isStopWord(w))
        .map((w) => w.slice(0, 5)),
    ),
  ];
}

/** The share of `asked` that `have` contains. */
function shareOf(asked: readonly string[], have: readonly string[]): number {
  if (asked.length === 0) return 0;
  const set = new Set(have);
  return asked.filter((w) => set.has(w)).length / asked.length;
}
