import type { FfmpegLimits } from "./ffmpeg.ts";

/**
 * Processor time ffmpeg may use to decode a second of a recording, with a floor for short ones,
 * far above what real files cost (measured with ffmpeg 5.1 on this project's machines, #35):
 * - sound, to 16 kHz mono PCM: 0.003 s a second (a 50-s Opus recording of a human voice);
 * - pictures, every frame decoded and scored for scene changes, chosen ones scaled to grey:
 *   0.17 s a second for 1080p at 30 frames/s (H.264); 4K at 60 frames/s costs about eight times as
 *   much.
 * A file that needs more than this is damaged or built to stall readers (a tiny declared length
 * over a huge stream, pictures larger than any screen).
 */
const BUDGETS = {
  sound: { floorS: 10, perSecondS: 0.25 },
  pictures: { floorS: 30, perSecondS: 4 },
} as const;

/**
 * How long ffmpeg may leave its reader waiting for the next piece of output before it is taken
 * for hung: a chosen frame comes at least every few seconds of video (FrameOptions.floorS), which
 * even 4K takes seconds of processor time to reach, and a busy machine may give ffmpeg a quarter
 * of a core.
 */
const HANG_MS = 300_000;

/**
 * The limits of ffmpeg decoding a recording's sound or pictures: a processor-time budget from its
 * length (the length it declares, else the longest Locus reads), and a ceiling for hangs.
 */
export function decodeLimits(what: keyof typeof BUDGETS, lengthS: number): FfmpegLimits {
  const budget = BUDGETS[what];
  return { cpuMs: Math.round((budget.floorS + budget.perSecondS * lengthS) * 1000), hangMs: HANG_MS };
}
