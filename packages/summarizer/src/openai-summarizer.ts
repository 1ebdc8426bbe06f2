import OpenAI, { APIError } from "openai";
import { remoteFailure } from "@locus/embedder";
import {
  noAnswer,
  SummarizerError,
  type CitablePassage,
  type Summarizer,
  type Summary,
  type SummaryCitation,
} from "./summarizer.ts";

export interface OpenAiSummarizerOptions {
  /** Any OpenAI-compatible server: OpenAI itself, or a local one (Ollama, vLLM, LocalAI, …). */
  baseURL: string;
  apiKey: string;
  /** The chat model, e.g. gpt-4o-mini or llama3.1. */
  model: string;
  /** Longest wait for one request, in ms. */
  timeoutMs: number;
  /** Retries on 429, 5xx and dropped connections (the client backs off between them). */
  maxRetries: number;
  /** Most tokens of answer (default 400). */
  maxTokens?: number;
}

/** What the model answers when the passages do not answer the question. */
const NOT_ANSWERED = "NOT_ANSWERED";

const INSTRUCTIONS = [
  "You answer questions about a user's documents using only the numbered passages given.",
  "Write two to four sentences that synthesise what the passages say, across documents when several are relevant.",
  "End every sentence that states something from a passage with the passage's number in square brackets, like [2] or [1][3].",
  "Cite only the numbers given. Do not use outside knowledge. Do not mention passage numbers in any other way.",
  `If the passages do not answer the question, reply with exactly ${NOT_ANSWERED}.`,
].join(" ");

/**
 * A summary written by a chat model on an OpenAI-compatible server. The model sees the question
 * and the passages, numbered; what it writes is checked before anyone sees it:
 * - markers are normalised ("[1, 3]" → "[1][3]") and renumbered 1, 2, 3… in order of first
 *   appearance; a marker naming a passage it was not given is removed, so the summary never cites
 *   what it was not given;
 * - an answer that cites no passage at all is not used (SummarizerError: the caller falls back to
 *   the extractive summary), since every claim must rest on a returned passage;
 * - citations quote the passage they point at, and their locators come from the passage, never
 *   from the model.
 */
export class OpenAiSummarizer implements Summarizer {
  readonly name: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiSummarizerOptions) {
    this.name = options.model;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
  }

  async summarize(
    question: string,
    passages: readonly CitablePassage[],
    signal?: AbortSignal,
  ): Promise<Summary> {
    if (passages.length === 0) return noAnswer(this.name);
    const sources = passages
      .map((p) => `[${p.n}] (from "${p.fileName}")\n${p.content.replace(/\s*\n\s*/g, " ")}`)
      .join("\n\n");
    let reply: string;
    try {
      const completion = await this.client.chat.completions.create(
        {
          model: this.options.model,
          temperature: 0.1,
          max_tokens: this.options.maxTokens ?? 400,
          messages: [
            { role: "system", content: INSTRUCTIONS },
            { role: "user", content: `Passages:\n\n${sources}\n\nQuestion: ${question}` },
          ],
        },
        signal ? { signal } : {},
      );
      reply = completion.choices[0]?.message.content?.trim() ?? "";
    } catch (err) {
      const status = err instanceof APIError && err.status !== undefined ? ` (${err.status})` : "";
      throw new SummarizerError(
        `The chat model server failed${status}: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err, reason: remoteFailure(err, "chat model server") },
      );
    }
    if (reply.length === 0) throw new SummarizerError("The chat model answered with nothing.");
    if (reply.replace(/[^A-Z_]/g, "") === NOT_ANSWERED) return noAnswer(this.name);
    return citedSummary(reply, passages, this.name);
  }
}

/** Checks and renumbers the model's markers (see OpenAiSummarizer). Exported for its tests. */
export function citedSummary(reply: string, passages: readonly CitablePassage[], source: string): Summary {
  const given = new Map(passages.map((p) => [p.n, p]));
  const renumbered = new Map<number, number>();
  const citations: SummaryCitation[] = [];
  // "[1]", "[1, 3]", "[1; 3]", "[1,3,4]": one or more numbers in brackets.
  const text = reply
    .replace(/\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]/g, (_match, list: string) =>
      list
        .split(/[,;]/)
        .map((n) => Number(n.trim()))
        .filter((n) => given.has(n))
        .map((n) => {
          let marker = renumbered.get(n);
          if (marker === undefined) {
            marker = renumbered.size + 1;
            renumbered.set(n, marker);
            citations.push({ n: marker, passage: n, quote: given.get(n)?.content ?? "" });
          }
          return `[${marker}]`;
        })
        .join(""),
    )
    .replace(/[ \t]+([.,;:!?])/g, "$1")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
  if (citations.length === 0) {
    throw new SummarizerError("The chat model's answer cited none of the passages it was given.");
  }
  return { text, citations, answered: true, source };
}
