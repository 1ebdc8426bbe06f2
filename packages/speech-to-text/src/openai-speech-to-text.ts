import OpenAI, { APIError, toFile } from "openai";
import { SpeechEngineError, wavFile, type SpeechSegment, type SpeechToText } from "./speech-to-text.ts";

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
 * Speech to text through an OpenAI-compatible transcription endpoint, asking for segment times
 * (`verbose_json`). A chunk is sent as a WAV file.
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

  async transcribe(pcm: Buffer, signal?: AbortSignal): Promise<SpeechSegment[]> {
    const file = await toFile(wavFile(pcm), "chunk.wav", { type: "audio/wav" });
    let response: OpenAI.Audio.Transcriptions.TranscriptionVerbose;
    try {
      response = await this.client.audio.transcriptions.create(
        {
          file,
          model: this.options.model,
          response_format: "verbose_json",
          timestamp_granularities: ["segment"],
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
    const seconds = pcm.length / 32_000;
    if (!response.segments || response.segments.length === 0) {
      // A server that gives text without segments: the chunk is the best time there is.
      const text = response.text.trim();
      return text ? [{ text, start: 0, end: seconds }] : [];
    }
    return response.segments
      .filter((s) => s.text.trim().length > 0)
      .map((s) => ({
        text: s.text.trim(),
        start: Math.max(0, s.start),
        end: Math.min(seconds, Math.max(s.start, s.end)),
        // The mean log-probability of the segment's tokens, as a probability.
        confidence: Math.round(Math.min(1, Math.exp(s.avg_logprob)) * 100) / 100,
      }));
  }
}
