/**
 * Loudness of the PCM engines take (16 kHz mono s16le), judged over 20 ms frames: where the
 * recording pipeline cuts chunks and where an engine cuts a chunk into utterances.
 */

/** Bytes of one 20 ms frame. */
export const FRAME_BYTES = (16_000 / 50) * 2;
export const FRAME_S = 0.02;

/** A frame quieter than this RMS (of 32768) is quiet: about −38 dBFS. */
export const QUIET_RMS = 400;

/** The RMS of the frame of `pcm` that starts at byte `offset` (shorter at the end). */
export function frameRms(pcm: Buffer, offset: number): number {
  let sum = 0;
  const end = Math.min(pcm.length, offset + FRAME_BYTES);
  for (let i = offset; i + 1 < end; i += 2) {
    const v = pcm.readInt16LE(i);
    sum += v * v;
  }
  return Math.sqrt(sum / Math.max(1, (end - offset) / 2));
}
