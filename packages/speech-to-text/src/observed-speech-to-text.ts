// Speech to text that reports how long each chunk took the engine (for metrics).

import {
  PCM_BYTES_PER_SECOND,
  type ChunkOptions,
  type SpeechSegment,
  type SpeechToText,
} from "./speech-to-text.ts";

/** What speech to text tells whoever counts. `engine` is the configured one (pocketsphinx, openai). */
export interface SpeechObserver {
  /**
   * The engine was done with one chunk of `audioSeconds` of sound after `seconds`: their ratio is
   * its real-time factor.
   */
  chunkTranscribed(engine: string, outcome: "ok" | "error", seconds: number, audioSeconds: number): void;
}

/** `transcribe`, timed once per chunk, whichever extractor (audio, video) asks. */
export class ObservedSpeechToText implements SpeechToText {
  constructor(
    private readonly inner: SpeechToText,
    private readonly observer: SpeechObserver,
    private readonly engine: string,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  check(): Promise<void> {
    return this.inner.check();
  }

  async transcribe(pcm: Buffer, options?: ChunkOptions): Promise<SpeechSegment[]> {
    const started = performance.now();
    const report = (outcome: "ok" | "error") =>
      this.observer.chunkTranscribed(
        this.engine,
        outcome,
        (performance.now() - started) / 1000,
        pcm.length / PCM_BYTES_PER_SECOND,
      );
    let segments: SpeechSegment[];
    try {
      segments = await this.inner.transcribe(pcm, options);
    } catch (err) {
      report("error");
      throw err;
    }
    report("ok");
    return segments;
  }
}
