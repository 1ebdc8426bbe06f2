import { FileRejectedError } from "@locus/contracts";

/** One stretch of recognised speech, in seconds from the start of the audio given. */
export interface SpeechSegment {
  text: string;
  start: number;
  end: number;
  /** 0–1, when the engine says. */
  confidence?: number;
  /** Word by word, when the engine gives word times. */
  words?: { word: string; start: number; end: number }[];
}

/**
 * Speech to text: audio in, timed text out. Audio is 16 kHz mono signed 16-bit little-endian PCM,
 * a chunk of a recording (tens of seconds) at a time. Engines: pocketsphinx (offline, default) and
 * any OpenAI-compatible transcription API.
 */
export interface SpeechToText {
  /** What produced the text, for logs and reports: "pocketsphinx", or the API model's name. */
  readonly name: string;
  /**
   * Checks that the engine can run (binary and model present, or the API configured). Throws
   * SpeechEngineError with a sentence an operator can act on.
   */
  check(): Promise<void>;
  /** Transcribes one chunk. Throws SpeechEngineError when the engine cannot run at all. */
  transcribe(pcm: Buffer, options?: ChunkOptions): Promise<SpeechSegment[]>;
}

/** Where a word is said, in seconds from the start of the audio given; null when not found. */
export type WordTime = { start: number; end: number } | null;

/**
 * Finds where the words of a transcript are said in its audio (forced alignment), for engines
 * whose model gives text without word times.
 */
export interface WordAligner {
  /** A time (or null) for each of `words`, in order. */
  align(pcm: Buffer, words: readonly string[], options?: ChunkOptions): Promise<WordTime[]>;
}

export interface ChunkOptions {
  signal?: AbortSignal | undefined;
  /**
   * The file the chunk is of: an engine that works on this machine's processor takes its turn
   * with the other files' work (see CpuSlots).
   */
  owner?: string | undefined;
}

/** Bytes of one second of the PCM engines are given (16 kHz, 2 bytes a sample, mono). */
export const PCM_BYTES_PER_SECOND = 32_000;

/** The engine cannot work here (not installed, not configured): every recording will fail alike. */
export class SpeechEngineError extends FileRejectedError {
  declare readonly code: "speech_engine_unavailable";
  constructor(message: string, options?: { cause?: unknown }) {
    super("speech_engine_unavailable", message, options);
    this.name = "SpeechEngineError";
  }
}

/** A RIFF/WAVE header for 16 kHz mono 16-bit PCM: what files-based engines and APIs take. */
export function wavFile(pcm: Buffer): Buffer {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write("WAVE", 8, "latin1");
  header.write("fmt ", 12, "latin1");
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(PCM_BYTES_PER_SECOND, 28);
  header.writeUInt16LE(2, 32); // bytes a frame
  header.writeUInt16LE(16, 34); // bits a sample
  header.write("data", 36, "latin1");
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
