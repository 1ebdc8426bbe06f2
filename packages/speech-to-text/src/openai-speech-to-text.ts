import OpenAI, { APIError, toFile } from "openai";
import {
  PCM_BYTES_PER_SECOND,
  SpeechEngineError,
  wavFile,
  type ChunkOptions,
  type SpeechSegment,
  type SpeechToText,
} from "./speech-to-text.ts";

export interface OpenAiSpeechOptions {
  /** Any OpenAI-compatible server: OpenAI itself, or a local one (faster-whisper-server, vLLM, …). */
  baseURL: string;
  apiKey: string;
  /** The transcription model, e.g. whisper-1. */
  model: string;
  timeoutMs: number;
  /** Retries on 429, 5xx and dropped connections (the client backs off between them). */
  maxRetries: number;
}

/**
 * Speech to text through an OpenAI-compatible transcription endpoint, asking for word and segment
 * times (`verbose_json`). Servers that give word times get each word of a segment its own (so a
 * search lands on the word); the others give segments, and each word of a segment has the
 * segment's times. A chunk is sent as a WAV file.
 */
export class OpenAiSpeechToText implements SpeechToText {
  readonly name: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiSpeechOptions) {
    this.name = options.model;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
  }

  check(): Promise<void> {
    // Nothing to look at without spending a request: a wrong key or model shows on the first file.
    return Promise.resolve();
  }

  async transcribe(pcm: Buffer, options: ChunkOptions = {}): Promise<SpeechSegment[]> {
    const { signal } = options;
    const file = await toFile(wavFile(pcm), "chunk.wav", { type: "audio/wav" });
    let response: OpenAI.Audio.Transcriptions.TranscriptionVerbose;
    try {
      response = await this.client.audio.transcriptions.create(
        {
          file,
          model: this.options.model,
          response_format: "verbose_json",
          timestamp_granularities: ["word", "segment"],
        },
        signal ? { signal } : {},
      );
    } catch (err) {
      // A refused key or an unknown model will refuse every chunk alike: say what to fix.
      const status: number = err instanceof APIError ? Number(err.status) : 0;
      if ([400, 401, 403, 404].includes(status)) {
        throw new SpeechEngineError(
          `The transcription server refused the request (${status}): check OPENAI_BASE_URL, ` +
            `OPENAI_API_KEY and LOCUS_OPENAI_TRANSCRIBE_MODEL (${this.options.model}).`,
          { cause: err },
        );
      }
      throw err;
    }
    const seconds = pcm.length / PCM_BYTES_PER_SECOND;
    const clamp = (t: number) => Math.min(seconds, Math.max(0, t));
    const words = (response.words ?? []).map((w) => ({
      word: w.word,
      start: clamp(w.start),
      end: clamp(Math.max(w.start, w.end)),
    }));
    if (!response.segments || response.segments.length === 0) {
      // A server that gives text without segments: the chunk is the best time there is.
      const text = response.text.trim();
      if (!text) return [];
      const timed = alignWords(text, words);
      return [
        {
          text,
          start: timed?.[0]?.start ?? 0,
          end: timed?.at(-1)?.end ?? seconds,
          ...(timed ? { words: timed } : {}),
        },
      ];
    }
    return response.segments
      .filter((s) => s.text.trim().length > 0)
      .map((s) => {
        const text = s.text.trim();
        const inside = words.filter((w) => w.start >= s.start - 0.05 && w.start < s.end);
        const timed = alignWords(text, inside);
        return {
          text,
          start: clamp(s.start),
          end: clamp(Math.max(s.start, s.end)),
          // The mean log-probability of the segment's tokens, as a probability.
          confidence: Math.round(Math.min(1, Math.exp(s.avg_logprob)) * 100) / 100,
          ...(timed ? { words: timed } : {}),
        };
      });
  }
}

const letters = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");

/**
 * The words of `text` (what whitespace separates, punctuation kept) with the times of the
 * server's words, matched by their letters: a server's word may carry a token's punctuation or
 * split a token ("don't" as "don" "'t"). Undefined when they do not line up, or there are none.
 */
export function alignWords(
  text: string,
  words: readonly { word: string; start: number; end: number }[],
): { word: string; start: number; end: number }[] | undefined {
  if (words.length === 0) return undefined;
  const aligned: { word: string; start: number; end: number }[] = [];
  let j = 0;
  for (const token of text.split(/\s+/).filter((t) => t.length > 0)) {
    const target = letters(token);
    const previous = aligned.at(-1)?.end ?? words[0]?.start ?? 0;
    if (!target) {
      // A dash or a stray mark: it takes the moment between its neighbours.
      aligned.push({ word: token, start: previous, end: previous });
      continue;
    }
    let heard = "";
    const first = j;
    while (j < words.length && heard.length < target.length) heard += letters(words[j++]?.word ?? "");
    const start = words[first]?.start;
    const end = words[j - 1]?.end;
    if (heard !== target || start === undefined || end === undefined) return undefined;
    aligned.push({ word: token, start, end });
  }
  return j === words.length ? aligned : undefined;
}
