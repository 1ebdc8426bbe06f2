import { readFile } from "node:fs/promises";
import type { ExtractedPassage } from "@locus/contracts";
import { join } from "node:path";
import { FIXTURES_DIR } from "../harness/paths.ts";
import { buildVocabulary, rng } from "../corpus/corpus.ts";
import {
  client,
  createUserWithKey,
  encodeAudio,
  makeTextImage,
  makeVideo,
  createOcrEngine,
  type OcrEngine,
  MoonshineSpeechToText,
  PocketsphinxSpeechToText,
  readVideo,
  recording,
  speak,
  speechClips,
  transcribeRecording,
  wav16k,
  transcriptOf,
  wordErrors,
  type SpeechToText,
} from "../harness/deps.ts";
import { since, withServer, withTempDir } from "../harness/harness.ts";
import { ingest } from "../pdf/pdf-ingestion.ts";
import { median, round } from "../harness/stats.ts";

/**
 * Media figures: each offline speech engine's real-time factor (processing seconds per second of
 * audio, through the whole pipeline: ffmpeg decode, chunks at pauses, the engine), side by side in
 * the same run, and its word error rate on real human recordings (bench/fixtures: ALSA's
 * announcements, LibriVox readings, a 1961 speech) and on synthetic speech; a 10-minute recording
 * through the server (its default engine), and video frames read by OCR per second.
 */
export interface MediaBenchOptions {
  /** Sentences of synthetic speech in the real-time-factor recording (~5 s each with pauses). */
  sentences: number;
  rounds: number;
  /** Length of the recording sent through the server. */
  longRecordingMinutes: number;
  /** Slides of the video, 5 s each. */
  videoSlides: number;
}

export const DEFAULT_MEDIA_OPTIONS: MediaBenchOptions = {
  sentences: 12,
  rounds: 3,
  longRecordingMinutes: 10,
  videoSlides: 12,
};

export interface WerResult {
  engine: string;
  recording: string;
  /** Real human speech, or flite's synthetic voice. */
  voice: "human" | "synthetic";
  /** Real clips: `dev` (engine settings were chosen on them) or `test`. */
  set?: "dev" | "test";
  reference: string;
  hypothesis: string;
  words: number;
  errors: number;
  /** (substitutions + deletions + insertions) / reference words. */
  wer: number;
}

/** Word errors pooled over recordings (errors / words), as a fraction. */
export function pooledWer(rows: readonly WerResult[]): number | null {
  const words = rows.reduce((sum, r) => sum + r.words, 0);
  return words === 0 ? null : Math.round((rows.reduce((sum, r) => sum + r.errors, 0) / words) * 1000) / 1000;
}

/** The engine the server hears with by default: the first measured. */
export const defaultEngine = (m: MediaBenchResult) => m.speech.engines[0]?.engine;

/** Where an engine's word times put the phrases of recordings whose every phrase's second is known. */
export interface WordTimesResult {
  engine: string;
  phrases: number;
  /** Phrases with a word starting between a second before the phrase and its end. */
  found: number;
  /** Seconds from the phrase's true start to its first word's (found phrases), absolute. */
  onsetErrorS: { median: number | null; p90: number | null; max: number | null };
  /** Words timed in the silence between phrases (more than 0.5 s from every phrase). */
  wordsInSilence: number;
  words: number;
}

export interface MediaBenchResult {
  speech: {
    audioS: number;
    engines: { engine: string; rounds: { ms: number; rtf: number }[]; medianRtf: number }[];
    /** Why the OpenAI-compatible engine has no figure here. */
    openai: string;
  };
  wer: WerResult[];
  wordTimes: WordTimesResult[];
  longRecording: { audioS: number; serverReadyMs: number; passages: number };
  video: { seconds: number; framesRead: number; ms: number; framesPerSecond: number; realTimeFactor: number };
}

const FIXTURES = FIXTURES_DIR;
/** What is said in fixtures/alsa-speaker-test.wav. */
export const HUMAN_REFERENCE =
  "front center front left front right rear center rear left rear right side left side right";

function sentences(seed: number, count: number): string[] {
  const vocab = buildVocabulary(300).words.slice(0, 300);
  const random = rng(seed);
  return Array.from({ length: count }, () => {
    const n = 8 + Math.floor(random() * 6);
    return Array.from({ length: n }, () => vocab[Math.floor(random() * vocab.length)]!).join(" ") + ".";
  });
}

async function spoken(texts: string[], pauseS: number): Promise<Buffer> {
  const parts: (Buffer | number)[] = [];
  for (const text of texts) parts.push(await speak(text), pauseS);
  return recording(parts);
}

async function transcript(audio: Buffer, speech: SpeechToText): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const passages: ExtractedPassage[] = [];
  const quiet = { warn: () => undefined };
  for await (const p of transcribeRecording(
    audio,
    "audio/wav",
    { speech, logger: quiet, maxDurationS: 86_400 },
    () => undefined,
  ))
    passages.push(p);
  // Passages overlap by a couple of seconds: each word said once.
  return { text: transcriptOf(passages), ms: since(started) };
}

/**
 * Word times against truth: the quality benchmark's two recordings of real Asterisk prompts, laid
 * at constructed offsets (bench/fixtures/quality/queries.json gives each phrase's true start and
 * end; nothing Locus computed). Each recording goes through the whole pipeline; every word of
 * every passage (passages overlap: a word may count twice) is matched to the phrases.
 */
async function measureWordTimes(engine: string, speech: SpeechToText): Promise<WordTimesResult> {
  const { speechQueries } = JSON.parse(await readFile(join(FIXTURES, "quality", "queries.json"), "utf8")) as {
    speechQueries: { file: string; start: number; end: number; category: string }[];
  };
  const onsets: number[] = [];
  let phrases = 0;
  let words = 0;
  let wordsInSilence = 0;
  for (const file of [...new Set(speechQueries.map((q) => q.file))]) {
    const clips = speechQueries.filter((q) => q.file === file && q.category === "phrase");
    const passages: ExtractedPassage[] = [];
    const audio = await readFile(join(FIXTURES, "quality", file));
    for await (const p of transcribeRecording(
      audio,
      "audio/ogg",
      { speech, logger: { warn: () => undefined }, maxDurationS: 86_400 },
      () => undefined,
    ))
      passages.push(p);
    const starts = passages.flatMap((p) =>
      (p.locator.word_times ?? []).map(([start, end]) => ({ start, end })),
    );
    words += starts.length;
    wordsInSilence += starts.filter(
      (w) => !clips.some((c) => w.start >= c.start - 0.5 && w.end <= c.end + 0.5),
    ).length;
    for (const clip of clips) {
      phrases++;
      const first = starts
        .filter((w) => w.start >= clip.start - 1 && w.start <= clip.end)
        .sort((a, b) => a.start - b.start)[0];
      if (first) onsets.push(Math.abs(first.start - clip.start));
    }
  }
  onsets.sort((a, b) => a - b);
  const at = (q: number) =>
    onsets.length === 0 ? null : round(onsets[Math.min(onsets.length - 1, Math.floor(q * onsets.length))]!);
  return {
    engine,
    phrases,
    found: onsets.length,
    onsetErrorS: { median: at(0.5), p90: at(0.9), max: at(1) },
    wordsInSilence,
    words,
  };
}

/** The offline engines, as the server makes them: Moonshine (its default) with pocketsphinx placing its words, and pocketsphinx. */
const ENGINES: { engine: string; make: () => SpeechToText; timesOnly?: boolean }[] = [
  {
    engine: "moonshine (base, English), words placed by pocketsphinx",
    make: () => new MoonshineSpeechToText({ aligner: new PocketsphinxSpeechToText() }),
  },
  {
    engine: "moonshine (base, English), words spread over each utterance (no aligner)",
    make: () => new MoonshineSpeechToText(),
    timesOnly: true,
  },
  { engine: "pocketsphinx (Debian 0.8+5prealpha, en-us)", make: () => new PocketsphinxSpeechToText() },
];

export async function benchMedia(
  options: MediaBenchOptions,
  log: (line: string) => void,
): Promise<MediaBenchResult> {
  // Real-time factor through the whole pipeline, each engine on the same audio.
  const texts = sentences(31, options.sentences);
  const audio = await spoken(texts, 1);
  const audioS = (audio.length - 44) / 32_000;
  const human = [
    {
      recording: "ALSA's announcements (fixtures/alsa-speaker-test.wav)",
      reference: HUMAN_REFERENCE,
      set: "test" as const,
      audio: await readFile(join(FIXTURES, "alsa-speaker-test.wav")),
    },
    ...speechClips().map((clip) => ({
      recording: `fixtures/speech/${clip.file}`,
      reference: clip.text,
      set: clip.set,
      audio: wav16k(clip.pcm),
    })),
  ];
  const engines: MediaBenchResult["speech"]["engines"] = [];
  const wer: WerResult[] = [];
  const wordTimes: WordTimesResult[] = [];
  let speech: SpeechToText | undefined;
  for (const { engine, make, timesOnly } of ENGINES) {
    const candidate = make();
    await candidate.check();
    speech ??= candidate;
    wordTimes.push(await measureWordTimes(engine, candidate));
    const times = wordTimes.at(-1);
    log(
      `media: ${engine}: ${times?.found}/${times?.phrases} phrases, first words ${times?.onsetErrorS.median} s from their start (median), ${times?.wordsInSilence} of ${times?.words} words in silence`,
    );
    // The variant without an aligner differs in its word times only.
    if (timesOnly) continue;
    // A first run loads the model (Moonshine: about 3 s, once a process): not counted.
    await transcript(recording([1]), candidate);
    const rounds: { ms: number; rtf: number }[] = [];
    let synthetic = "";
    for (let r = 0; r < options.rounds; r++) {
      const { text, ms } = await transcript(audio, candidate);
      synthetic = text;
      rounds.push({ ms: round(ms), rtf: Math.round((ms / 1000 / audioS) * 1000) / 1000 });
      log(`media: ${engine}, ${round(audioS)} s of speech in ${round(ms)} ms`);
    }
    engines.push({ engine, rounds, medianRtf: median(rounds.map((r) => r.rtf)) });
    const heard = [];
    for (const h of human) heard.push({ ...h, hypothesis: (await transcript(h.audio, candidate)).text });
    for (const w of [
      ...heard.map(({ recording, reference, set, hypothesis }) => ({
        recording,
        reference,
        hypothesis,
        set,
        voice: "human" as const,
      })),
      {
        recording: "flite synthetic voice (slt), random English words",
        reference: texts.join(" "),
        hypothesis: synthetic,
        voice: "synthetic" as const,
      },
    ]) {
      const e = wordErrors(w.reference, w.hypothesis);
      wer.push({ engine, ...w, ...e, wer: Math.round((e.errors / e.words) * 1000) / 1000 });
      log(`media: ${engine}: WER ${w.recording}: ${e.errors}/${e.words}`);
    }
  }
  if (!speech) throw new Error("no speech engine");

  // A long recording through the running server, upload to ready.
  // Sentences until the recording is at least as long as asked (their lengths vary).
  const longParts: (Buffer | number)[] = [];
  let longSoFar = 0;
  for (let i = 0; longSoFar < options.longRecordingMinutes * 60; i++) {
    const [text] = sentences(1000 + i, 1);
    const part = await speak(text ?? "");
    longParts.push(part, 1);
    longSoFar += (part.length - 44) / 32_000 + 1;
  }
  const long = recording(longParts);
  const longS = (long.length - 44) / 32_000;
  const mp3 = await encodeAudio(long, "mp3");
  const longRecording = await withTempDir("locus-bench-media-", (dir) =>
    withServer(dir, {}, async (server) => {
      const { key } = await createUserWithKey(server.dataDir, { plan: "pro" });
      const c = client(server.baseUrl, key);
      const run = await ingest(c, mp3, "long.mp3", 500, 30 * 60_000);
      log(`media: ${round(longS)} s recording ready in ${run.serverReadyMs} ms (server clock)`);
      return { audioS: round(longS), serverReadyMs: run.serverReadyMs, passages: run.passageCount };
    }),
  );

  // Video frames read by OCR: a silent slide video, through the video extractor's reading.
  const slides = await Promise.all(
    Array.from({ length: options.videoSlides }, async (_, i) => ({
      image: (await makeTextImage({ lines: sentences(500 + i, 4), width: 1280, height: 720, fontPx: 30 }))
        .data,
      seconds: 5,
    })),
  );
  const video = await makeVideo({ slides, format: "mp4", width: 1280, height: 720 });
  // The engine the server chooses by default: the tesseract command when installed, else tesseract.js.
  const engine = createOcrEngine({ languages: ["eng"], workers: 2 });
  let framesRead = 0;
  const counting = Object.assign(Object.create(engine) as OcrEngine, {
    recognize: (image: Buffer) => {
      framesRead += 1;
      return engine.recognize(image);
    },
  });
  const started = performance.now();
  try {
    const reading = readVideo(
      video,
      "video/mp4",
      {
        speech,
        engine: counting,
        logger: { warn: () => undefined },
        maxDurationS: 86_400,
        minConfidence: 0.5,
      },
      () => undefined,
    );
    for await (const passage of reading) void passage;
  } finally {
    await engine.close();
  }
  const ms = since(started);
  const seconds = options.videoSlides * 5;
  log(`media: ${seconds} s video, ${framesRead} frames read in ${round(ms)} ms`);
  return {
    speech: {
      audioS: round(audioS),
      engines,
      openai:
        "not measured: it depends on the server it calls (no OpenAI-compatible transcription server can run on this machine; the tests use a local stand-in that answers at once)",
    },
    wer,
    wordTimes,
    longRecording,
    video: {
      seconds,
      framesRead,
      ms: round(ms),
      framesPerSecond: Math.round((framesRead / (ms / 1000)) * 100) / 100,
      realTimeFactor: Math.round((ms / 1000 / seconds) * 1000) / 1000,
    },
  };
}
