import { spawn } from "node:child_process";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { limitChild, UNLIMITED, type ChildLimitOptions, type CpuSlots } from "@locus/cpu-scheduler";
import {
  PCM_BYTES_PER_SECOND,
  SpeechEngineError,
  wavFile,
  type ChunkOptions,
  type SpeechSegment,
  type SpeechToText,
  type WordAligner,
  type WordTime,
} from "./speech-to-text.ts";

export interface PocketsphinxOptions {
  /** The decoder: Debian's `pocketsphinx` package installs it on the PATH. */
  binary?: string;
  /** The acoustic model, language model and dictionary: Debian's `pocketsphinx-en-us`. */
  modelDir?: string;
  /**
   * Processor time a chunk may use, as a multiple of its length (plus a few seconds to start):
   * time it spends waiting for a core on a busy machine does not count.
   */
  cpuFactor?: number;
  /** Where its runs take their turn with the process's other CPU-heavy work (UNLIMITED: at once). */
  cpu?: CpuSlots;
}

/**
 * The wall-clock ceiling of a chunk, as a multiple of its processor budget: only a hang reaches
 * it (a decoder blocked forever uses no processor time), while a busy machine that gives it a
 * tenth of a core does not.
 */
const WALL_PER_CPU = 10;

const DEFAULT_BINARY = "pocketsphinx_continuous";
export const DEFAULT_POCKETSPHINX_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";

/** Tokens the decoder writes that are not words: silences, noises, utterance marks. */
const NOT_WORDS = /^(<s>|<\/s>|<sil>|\[[A-Z_]+\]|\+\+.*\+\+)$/;

/**
 * Offline speech to text with CMU Sphinx (pocketsphinx_continuous, run once per chunk on a WAV
 * file). Word times come from `-time yes`: a line per word with its start, end and probability,
 * utterances marked by <s> and </s>.
 */
export class PocketsphinxSpeechToText implements SpeechToText, WordAligner {
  readonly name = "pocketsphinx";
  private readonly binary: string;
  private readonly modelDir: string;
  private readonly cpuFactor: number;
  private readonly cpu: CpuSlots;
  private words?: Promise<Set<string>>;

  constructor(options: PocketsphinxOptions = {}) {
    this.binary = options.binary ?? DEFAULT_BINARY;
    this.modelDir = options.modelDir ?? DEFAULT_POCKETSPHINX_MODEL_DIR;
    this.cpuFactor = options.cpuFactor ?? 4;
    this.cpu = options.cpu ?? UNLIMITED;
  }

  private get modelFiles() {
    return {
      hmm: join(this.modelDir, "en-us"),
      lm: join(this.modelDir, "en-us.lm.bin"),
      dict: join(this.modelDir, "cmudict-en-us.dict"),
    };
  }

  async check(): Promise<void> {
    const missingModel = await Promise.all(
      Object.values(this.modelFiles).map((p) =>
        access(p).then(
          () => null,
          () => p,
        ),
      ),
    );
    const absent = missingModel.filter(Boolean);
    if (absent.length > 0) {
      throw new SpeechEngineError(
        `The pocketsphinx English model is not installed (${absent.join(", ")} missing): install Debian's ` +
          "pocketsphinx-en-us package, or set LOCUS_POCKETSPHINX_MODEL_DIR.",
      );
    }
    await new Promise<void>((resolve, reject) => {
      const child = spawn(this.binary, ["-h"], { stdio: "ignore" });
      child.once("error", () =>
        reject(
          new SpeechEngineError(
            `The speech recogniser ${this.binary} is not installed: install Debian's pocketsphinx package, ` +
              "or choose another engine with LOCUS_SPEECH_ENGINE.",
          ),
        ),
      );
      child.once("close", () => resolve());
    });
  }

  async transcribe(pcm: Buffer, options: ChunkOptions = {}): Promise<SpeechSegment[]> {
    return parseTimedOutput(await this.decode(pcm, { languageModel: this.modelFiles.lm }, options));
  }

  /**
   * Forced alignment: where each of `words` (a transcript of the audio, from another engine) is
   * said, found by decoding the audio against a grammar that accepts those words in that order
   * and nothing else (silences and noises may come between them). Words the pronouncing
   * dictionary lacks are left out of the grammar, and their times are null; so are all of them
   * when the decoder finds no path through the grammar (the transcript is not what was said).
   * About a tenth of the processor time of recognition: the search follows the transcript.
   */
  async align(pcm: Buffer, words: readonly string[], options: ChunkOptions = {}): Promise<WordTime[]> {
    const dictionary = await this.dictionary();
    const spoken = words.map((word) => dictionaryForms(word).filter((form) => dictionary.has(form)));
    const grammar = spoken.flat();
    const none = words.map(() => null);
    if (grammar.length === 0) return none;
    // Dictionary words are letters, digits and apostrophes: JSGF tokens as they are (this parser
    // would keep quotes as part of the word). Every word is required: this decoder handles
    // optional words ("[word]") badly (it reorders them and skips words it hears).
    const jsgf = `#JSGF V1.0;\ngrammar forced;\npublic <said> = ${grammar.join(" ")};\n`;
    const found = parseTimedOutput(await this.decode(pcm, { grammar: jsgf }, options)).flatMap(
      (s) => s.words ?? [],
    );
    // The decoder may give up (no path to the grammar's end): then it found nothing, or less.
    if (found.length !== grammar.length) return none;
    let next = 0;
    return spoken.map((forms) => {
      if (forms.length === 0) return null;
      const first = found[next];
      const last = found[next + forms.length - 1];
      next += forms.length;
      return first && last ? { start: first.start, end: last.end } : null;
    });
  }

  /** The words of the pronouncing dictionary (about 135,000), read once. */
  private dictionary(): Promise<Set<string>> {
    this.words ??= readFile(this.modelFiles.dict, "utf8").then(
      (text) => new Set(text.split("\n").map((line) => line.slice(0, line.indexOf(" ")))),
    );
    return this.words;
  }

  /**
   * Decodes the PCM with the acoustic model and dictionary, searching by a language model (what
   * was said is unknown) or a JSGF grammar (forced alignment), in this process's turn for the
   * processor, under time limits that tell a hang from a busy machine. The decoder's timed output.
   */
  private async decode(
    pcm: Buffer,
    search: { languageModel: string } | { grammar: string },
    options: ChunkOptions,
  ): Promise<string> {
    options.signal?.throwIfAborted();
    const dir = await mkdtemp(join(tmpdir(), "locus-speech-"));
    try {
      const file = join(dir, "chunk.wav");
      await writeFile(file, wavFile(pcm));
      let args: string[];
      if ("grammar" in search) {
        const grammar = join(dir, "grammar.jsgf");
        await writeFile(grammar, search.grammar);
        // One utterance for the whole audio: the decoder's voice detection would otherwise end
        // one at each pause, and no piece alone holds the whole grammar (50 s of quiet ends it).
        args = ["-jsgf", grammar, "-vad_postspeech", "5000"];
      } else {
        args = ["-lm", search.languageModel];
      }
      const { hmm, dict } = this.modelFiles;
      const seconds = pcm.length / PCM_BYTES_PER_SECOND;
      const cpuMs = (5 + seconds * this.cpuFactor) * 1000;
      return await this.cpu.run(
        options.owner ?? "",
        () =>
          this.run(
            ["-infile", file, "-time", "yes", "-logfn", "/dev/null", "-hmm", hmm, "-dict", dict, ...args],
            { cpuMs, wallMs: cpuMs * WALL_PER_CPU },
            options.signal,
          ),
        options.signal ? { signal: options.signal } : {},
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private run(args: string[], limits: ChildLimitOptions, signal?: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (t: string) => (out += t));
      child.stderr.setEncoding("utf8").on("data", (t: string) => (err = (err + t).slice(-4000)));
      const limit = limitChild(child, limits);
      const abort = () => child.kill("SIGKILL");
      // Aborted while waiting for its turn: an abort event will not come again.
      if (signal?.aborted) abort();
      else signal?.addEventListener("abort", abort, { once: true });
      child.once("error", (e: NodeJS.ErrnoException) => {
        limit.dispose();
        reject(
          e.code === "ENOENT"
            ? new SpeechEngineError(`The speech recogniser ${this.binary} is not installed.`, { cause: e })
            : e,
        );
      });
      child.once("close", (code, killedBy) => {
        limit.dispose();
        signal?.removeEventListener("abort", abort);
        const stopped = limit.stopDescription();
        if (code === 0) resolve(out);
        else if (stopped) reject(new Error(`pocketsphinx was stopped: it ${stopped}`));
        else if (killedBy) reject(new Error(`pocketsphinx was stopped (${killedBy})`));
        else
          reject(
            new Error(`pocketsphinx exited with ${code}: ${err.trim().split("\n").slice(-2).join(" ")}`),
          );
      });
    });
  }
}

/**
 * The dictionary entries a word of a transcript is said as: lower case, its punctuation dropped
 * (an apostrophe inside stays: "don't"), split at hyphens and slashes ("ill-disposed" is "ill"
 * "disposed"). Numbers and symbols are not in the dictionary and drop out when looked up.
 */
export function dictionaryForms(word: string): string[] {
  return word
    .toLowerCase()
    .split(/[-\u2010-\u2015/]+/)
    .map((part) => part.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").replace(/\u2019/g, "'"))
    .filter((part) => part.length > 0);
}

/**
 * Reads pocketsphinx's `-time yes` output: for each utterance, a line with its text, then a line
 * per token ("word start end probability"), from <s> to </s>. Alternative pronunciations are
 * marked "word(2)"; silences and noises are not words.
 */
export function parseTimedOutput(output: string): SpeechSegment[] {
  const segments: SpeechSegment[] = [];
  let words: { word: string; start: number; end: number; p: number }[] = [];
  const flush = () => {
    const first = words[0];
    const last = words.at(-1);
    if (first && last) {
      segments.push({
        text: words.map((w) => w.word).join(" "),
        start: first.start,
        end: last.end,
        confidence: Math.max(0, Math.min(1, words.reduce((s, w) => s + w.p, 0) / words.length)),
        words: words.map(({ word, start, end }) => ({ word, start, end })),
      });
    }
    words = [];
  };
  for (const line of output.split("\n")) {
    const m = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(line.trim());
    if (!m) continue;
    const [, token = "", start, end, p] = m;
    if (token === "<s>") {
      flush();
      continue;
    }
    if (token === "</s>") {
      flush();
      continue;
    }
    if (NOT_WORDS.test(token)) continue;
    words.push({ word: token.replace(/\(\d+\)$/, ""), start: Number(start), end: Number(end), p: Number(p) });
  }
  flush();
  return segments;
}
