// The bench report's audio and video section: speech to text, word error rate, video frames.
import type { MediaBenchResult } from "./media.ts";
import { fmt, table } from "../harness/report-format.ts";

export function renderMedia(m: MediaBenchResult): string[] {
  const s = m.speech;
  return [
    "## Audio and video",
    "",
    `Speech to text through the whole pipeline the audio extractor runs (ffmpeg decode to 16 kHz PCM, chunks cut at pauses, ` +
      `${s.engine}), on ${s.audioS} s of flite speech (runs of random English words with 1 s pauses: no grammar, so the language model cannot help, a hard case for word error rate): processing seconds per second of audio.`,
    "",
    table(
      ["round", "ms", "real-time factor"],
      s.rounds.map((r, i) => [i + 1, fmt(r.ms), fmt(r.rtf)]),
    ),
    "",
    `- Median real-time factor: **${s.medianRtf}**. OpenAI-compatible engine: ${s.openai}.`,
    "",
    "Word error rate ((substitutions + deletions + insertions) / reference words, case and punctuation ignored):",
    "",
    table(
      ["recording", "words", "errors", "WER", "heard"],
      m.wer.map((w) => [
        w.recording,
        w.words,
        w.errors,
        `${(w.wer * 100).toFixed(1)}%`,
        w.hypothesis.length > 120 ? `${w.hypothesis.slice(0, 120)}…` : w.hypothesis,
      ]),
    ),
    "",
    `A ${(m.longRecording.audioS / 60).toFixed(1)}-minute recording (flite speech, MP3) uploaded to the running server: ready in ` +
      `**${(m.longRecording.serverReadyMs / 1000).toFixed(1)} s** on the server's clock, ${m.longRecording.passages} passages.`,
    "",
    `Video: ${m.video.seconds} s of 1280 × 720 slides (5 s each, silent), read as the video extractor reads it: ` +
      `${m.video.framesRead} frames read by OCR in ${fmt(m.video.ms)} ms, **${m.video.framesPerSecond} frames/s** ` +
      `(${m.video.realTimeFactor} s of processing per second of video, frame picking and decoding included).`,
    "",
  ];
}
