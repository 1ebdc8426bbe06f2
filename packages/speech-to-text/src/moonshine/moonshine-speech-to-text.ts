import type * as Onnx from "onnxruntime-node";
import { ModelUnavailableError } from "@locus/model-files";
import { UNLIMITED, type CpuSlots } from "@locus/cpu-scheduler";
import {
  SpeechEngineError,
  type ChunkOptions,
  type SpeechSegment,
  type SpeechToText,
  type WordAligner,
  type WordTime,
} from "../speech-to-text.ts";
import { DEFAULT_SPEECH_MODEL_DIR, moonshineInstalled, readMoonshineModel } from "./moonshine-model.ts";
import { MoonshineTokenizer } from "./tokenizer.ts";
import {
  DEFAULT_UTTERANCE_OPTIONS,
  placeWords,
  splitUtterances,
  type UtteranceOptions,
} from "./utterances.ts";

type Ort = typeof Onnx;
type Session = Onnx.InferenceSession;
type Tensor = Onnx.Tensor;

export interface MoonshineOptions {
  /** Where `pnpm install` put the model (see moonshine-model.ts). */
  modelDir?: string;
  /** Where its runs take their turn with the process's other CPU-heavy work (UNLIMITED: at once). */
  cpu?: CpuSlots;
  /**
   * Places the words in time: the model gives text only. Without one (or where it finds no
   * place), words are spread over their utterance's speech.
   */
  aligner?: WordAligner | undefined;
  utterances?: UtteranceOptions;
}

/** The decoder's shape (Moonshine base): layers, attention heads, and each head's width. */
const DECODER_LAYERS = 8;
const HEADS = 8;
const HEAD_SIZE = 52;

/**
 * Tokens a second of speech may give at most: fast speech is about 4; the model's authors stop
 * at 6 (about 13 characters a second). Greedy decoding can repeat itself without end on noise:
 * this bounds the work of an utterance, so a run always ends.
 */
const MAX_TOKENS_PER_S = 6;

interface Loaded {
  ort: Ort;
  encoder: Session;
  decoder: Session;
  tokenizer: MoonshineTokenizer;
}

/**
 * Offline speech to text with Moonshine base (English; see moonshine-model.ts), run by ONNX
 * Runtime in this process. A chunk is cut at pauses into utterances of up to 20 s (the model
 * reads at most about 30 s); each is encoded once and decoded greedily, token by token, with the
 * decoder's attention cache. Text comes cased and punctuated. Word times come from the aligner
 * (pocketsphinx's forced alignment) or, where it places none, by spreading an utterance's words
 * over its speech.
 *
 * No time limit is needed to tell a hang from a busy machine: the work of an utterance is bounded
 * (one encoder run, at most MAX_TOKENS_PER_S decoder runs a second), and the abort signal is
 * honoured between decoder runs.
 */
export class MoonshineSpeechToText implements SpeechToText {
  readonly name = "moonshine";
  private readonly modelDir: string;
  private readonly cpu: CpuSlots;
  private readonly aligner: WordAligner | undefined;
  private readonly utteranceOptions: UtteranceOptions;
  private loaded?: Promise<Loaded>;

  constructor(options: MoonshineOptions = {}) {
    this.modelDir = options.modelDir ?? DEFAULT_SPEECH_MODEL_DIR;
    this.cpu = options.cpu ?? UNLIMITED;
    this.aligner = options.aligner;
    this.utteranceOptions = options.utterances ?? DEFAULT_UTTERANCE_OPTIONS;
  }

  /**
   * The model's files are there and ONNX Runtime loads, without loading the model: that takes
   * about 3 s and 500 MB, which a process pays on its first recording, not at every start (its
   * files' hashes are checked then, and a file that is not the pinned one fails the recording
   * with speech_engine_unavailable, as a missing model would).
   */
  async check(): Promise<void> {
    if (!moonshineInstalled(this.modelDir)) throw notInstalled(`${this.modelDir} lacks its files`);
    await runtime();
  }

  async transcribe(pcm: Buffer, options: ChunkOptions = {}): Promise<SpeechSegment[]> {
    const model = await this.load();
    const segments: SpeechSegment[] = [];
    for (const utterance of splitUtterances(pcm, this.utteranceOptions)) {
      options.signal?.throwIfAborted();
      const text = await this.cpu.run(
        options.owner ?? "",
        () => recognise(model, utterance.pcm, options.signal),
        options.signal ? { signal: options.signal } : {},
      );
      const words = text.split(" ").filter((w) => w.length > 0);
      if (words.length === 0) continue;
      const aligned = await this.align(utterance.pcm, words, options);
      const times = placeWords(words, aligned, {
        duration: utterance.end - utterance.start,
        voiced: utterance.voiced,
      });
      const timed = words.map((word, i) => {
        const at = times[i] ?? { start: 0, end: 0 };
        return { word, start: utterance.start + at.start, end: utterance.start + at.end };
      });
      segments.push({
        text,
        start: utterance.start,
        end: utterance.end,
        words: inOrder(timed),
      });
    }
    return segments;
  }

  /**
   * The aligner's times, or none where it cannot work (not installed, stopped by its limits): the
   * words are then spread, less precisely, rather than the recording failed for their times.
   */
  private async align(pcm: Buffer, words: readonly string[], options: ChunkOptions): Promise<WordTime[]> {
    if (!this.aligner) return [];
    try {
      return await this.aligner.align(pcm, words, options);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      return [];
    }
  }

  private load(): Promise<Loaded> {
    this.loaded ??= (async () => {
      let files;
      try {
        files = await readMoonshineModel(this.modelDir);
      } catch (err) {
        if (err instanceof ModelUnavailableError) throw notInstalled(err.message, err);
        throw err;
      }
      const ort = await runtime();
      // One thread each: the process's CPU slots decide how many utterances run at once. Weights
      // are not also kept in the matrix routines' packed layout: that copy cost 130 MB of the
      // model's 560 MB resident for a decoder step 10% faster.
      const options = {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: "all" as const,
        extra: { session: { disable_prepacking: "1" } },
      };
      return {
        ort,
        encoder: await ort.InferenceSession.create(files.encoder, options),
        decoder: await ort.InferenceSession.create(files.decoder, options),
        tokenizer: MoonshineTokenizer.parse(files.tokenizer),
      };
    })();
    // A failed load is tried again by the next call (the files may be fetched meanwhile).
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }
}

const notInstalled = (reason: string, cause?: unknown) =>
  new SpeechEngineError(
    `The Moonshine speech model is not installed here (${reason}): run pnpm install, ` +
      "or choose another engine with LOCUS_SPEECH_ENGINE.",
    { cause },
  );

/** ONNX Runtime, loaded on first use: a process that never hears a recording never loads it. */
async function runtime(): Promise<Ort> {
  try {
    return await import("onnxruntime-node");
  } catch (err) {
    throw new SpeechEngineError("ONNX Runtime cannot load on this machine, so Moonshine cannot run.", {
      cause: err,
    });
  }
}

/**
 * The text of an utterance: the encoder reads the samples once; the decoder then gives one token
 * at a time, the most likely (greedy), reading its own cache of what it attended to so far.
 */
async function recognise(model: Loaded, pcm: Buffer, signal?: AbortSignal): Promise<string> {
  const { ort, encoder, decoder, tokenizer } = model;
  const samples = new Float32Array(pcm.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
  const encoded = await encoder.run({
    input_values: new ort.Tensor("float32", samples, [1, samples.length]),
  });
  const hidden = encoded.last_hidden_state;
  if (!hidden) throw new Error("the Moonshine encoder gave no output");
  let cache: Record<string, Tensor> = {};
  for (let layer = 0; layer < DECODER_LAYERS; layer++) {
    for (const part of ["decoder.key", "decoder.value", "encoder.key", "encoder.value"]) {
      cache[`past_key_values.${layer}.${part}`] = new ort.Tensor("float32", new Float32Array(0), [
        1,
        HEADS,
        0,
        HEAD_SIZE,
      ]);
    }
  }
  const maxTokens = Math.ceil((samples.length / 16_000) * MAX_TOKENS_PER_S);
  const tokens: number[] = [];
  let previous = MoonshineTokenizer.START;
  for (let step = 0; step < maxTokens; step++) {
    signal?.throwIfAborted();
    const out = await decoder.run({
      input_ids: new ort.Tensor("int64", BigInt64Array.of(BigInt(previous)), [1, 1]),
      encoder_hidden_states: hidden,
      // The first step computes the encoder's keys and values; later ones reuse them.
      use_cache_branch: new ort.Tensor("bool", [step > 0], [1]),
      ...cache,
    });
    const next = argmax(out.logits?.data as Float32Array);
    const kept: Record<string, Tensor> = {};
    for (let layer = 0; layer < DECODER_LAYERS; layer++) {
      for (const part of ["decoder.key", "decoder.value", "encoder.key", "encoder.value"]) {
        const name = `past_key_values.${layer}.${part}`;
        const present = out[`present.${layer}.${part}`];
        // The encoder's part is only computed on the first step: later outputs are placeholders.
        kept[name] = step > 0 && part.startsWith("encoder") ? (cache[name] as Tensor) : (present as Tensor);
      }
    }
    cache = kept;
    if (next === MoonshineTokenizer.END) break;
    tokens.push(next);
    previous = next;
  }
  return tokenizer.decode(tokens);
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if ((values[i] ?? 0) > (values[best] ?? 0)) best = i;
  return best;
}

/** Word times never go back (an aligner's and a spread word's may overlap at their joins). */
function inOrder<T extends { start: number; end: number }>(words: T[]): T[] {
  let last = 0;
  return words.map((w) => {
    const start = Math.max(w.start, last);
    const end = Math.max(w.end, start);
    last = start;
    return { ...w, start, end };
  });
}
