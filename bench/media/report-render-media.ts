// The bench report's audio and video section: speech to text, word error rate, video frames.
import { pooledWer, type MediaBenchResult, type WerResult } from "./media.ts";
import { fmt, table } from "../harness/report-format.ts";

export function renderMedia(m: MediaBenchResult): string[] {
  const s = m.speech;
  const engines = s.engines.map((e) => e.engine);
  const pooled = (engine: string, keep: (w: WerResult) => boolean) => {
    const wer = pooledWer(m.wer.filter((w) => w.engine === engine && keep(w)));
    return wer === null ? "–" : `${(wer * 100).toFixed(1)}%`;
  };
  return [
    "## Audio and video",
    "",
    `Speech to text through the whole pipeline the audio extractor runs (ffmpeg decode to 16 kHz PCM, chunks cut at pauses, ` +
      `the engine), each engine on the same ${s.audioS} s of flite speech (runs of random English words with 1 s pauses: no grammar, so a language model cannot help, a hard case for word error rate), in the same run: processing seconds per second of audio, one engine working at a time.`,
    "",
    table(
      ["engine", ...s.engines[0]!.rounds.map((_, i) => `round ${i + 1}, ms`), "median real-time factor"],
      s.engines.map((e) => [e.engine, ...e.rounds.map((r) => fmt(r.ms)), `**${e.medianRtf}**`]),
    ),
    "",
    `- The server's default engine is the first. OpenAI-compatible engine: ${s.openai}.`,
    "",
    "Word error rate ((substitutions + deletions + insertions) / reference words, after the normalisation of " +
      "bench/fixtures/speech/README.md), pooled over recordings. The real voices are recordings nobody made for Locus " +
      "(bench/fixtures/speech: LibriVox readings and a 1961 speech; ALSA's announcements); `dev` clips chose the engine's settings, `test` ones did not:",
    "",
    table(
      ["engine", "real voices, all", "real voices, test clips", "flite synthetic"],
      engines.map((engine) => [
        engine,
        pooled(engine, (w) => w.voice === "human"),
        pooled(engine, (w) => w.voice === "human" && w.set === "test"),
        pooled(engine, (w) => w.voice === "synthetic"),
      ]),
    ),
    "",
    "Each recording:",
    "",
    table(
      ["engine", "recording", "set", "words", "errors", "WER", "heard"],
      m.wer.map((w) => [
        w.engine,
        w.recording,
        w.set ?? "",
        w.words,
        w.errors,
        `${(w.wer * 100).toFixed(1)}%`,
        w.hypothesis.length > 100 ? `${w.hypothesis.slice(0, 100)}…` : w.hypothesis,
      ]),
    ),
    "",
    "Word times against truth: the quality benchmark's two recordings of real Asterisk prompts at constructed offsets " +
      "(24 phrases, each one's true start and end from the construction), through the whole pipeline; a phrase is found " +
      "when a word starts between a second before it and its end; the error is from its true start to its first word's:",
    "",
    table(
      [
        "engine",
        "phrases found",
        "first word's start error, median / p90 / max",
        "words timed in the silence between phrases",
      ],
      (m.wordTimes ?? []).map((w) => [
        w.engine,
        `${w.found} / ${w.phrases}`,
        `${w.onsetErrorS.median ?? "–"} / ${w.onsetErrorS.p90 ?? "–"} / ${w.onsetErrorS.max ?? "–"} s`,
        `${w.wordsInSilence} of ${w.words}`,
      ]),
    ),
    "",
    `A ${(m.longRecording.audioS / 60).toFixed(1)}-minute recording (flite speech, MP3) uploaded to the running server (its default engine): ready in ` +
      `**${(m.longRecording.serverReadyMs / 1000).toFixed(1)} s** on the server's clock, ${m.longRecording.passages} passages.`,
    "",
    `Video: ${m.video.seconds} s of 1280 × 720 slides (5 s each, silent), read as the video extractor reads it: ` +
      `${m.video.framesRead} frames read by OCR in ${fmt(m.video.ms)} ms, **${m.video.framesPerSecond} frames/s** ` +
      `(${m.video.realTimeFactor} s of processing per second of video, frame picking and decoding included).`,
    "",
  ];
}
