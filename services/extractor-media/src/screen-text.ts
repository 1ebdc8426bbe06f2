import { boxAround, type BoundingBox, type ExtractedPassage } from "@locus/contracts";

/** A line read on a frame. */
export interface ScreenLine {
  text: string;
  confidence: number;
  bbox: BoundingBox;
}

interface Shown {
  text: string;
  start: number;
  /** When it was last seen; it is on screen until the frame that no longer shows it. */
  end: number;
  confidences: number[];
  bbox: BoundingBox;
}

/** Readings of the same line on two frames differ in case, spacing and stray marks, not in words. */
const keyOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

const seconds = (s: number) => Math.round(s * 100) / 100;

/**
 * Follows text on screen across a video's frames: each line is shown from the first frame it is
 * read on until the first frame that no longer shows it. Lines shown over the same interval (a
 * slide's, a caption's) make one passage with that interval, `source: "screen"`, and the box
 * around them on the frame.
 */
export class ScreenText {
  private readonly open = new Map<string, Shown>();
  private readonly closed: Shown[] = [];

  /** The lines read on the frame at `timeS` (frames come in time order). */
  see(timeS: number, lines: readonly ScreenLine[]): void {
    const present = new Map<string, ScreenLine>();
    for (const line of lines) {
      const key = keyOf(line.text);
      if (key) present.set(key, line);
    }
    for (const [key, shown] of this.open) {
      if (present.has(key)) continue;
      shown.end = timeS;
      this.closed.push(shown);
      this.open.delete(key);
    }
    for (const [key, line] of present) {
      const shown = this.open.get(key);
      if (shown) {
        shown.end = timeS;
        shown.confidences.push(line.confidence);
      } else {
        this.open.set(key, {
          text: line.text,
          start: timeS,
          end: timeS,
          confidences: [line.confidence],
          bbox: line.bbox,
        });
      }
    }
  }

  /** Closes what is still on screen at the end of the video, and gives the passages in time order. */
  finish(endS: number): ExtractedPassage[] {
    for (const shown of this.open.values()) {
      shown.end = Math.max(shown.end, endS);
      this.closed.push(shown);
    }
    this.open.clear();
    const groups = new Map<string, Shown[]>();
    for (const shown of this.closed) {
      const key = `${seconds(shown.start)}-${seconds(shown.end)}`;
      groups.set(key, [...(groups.get(key) ?? []), shown]);
    }
    return [...groups.values()]
      .map((group) => {
        // Top to bottom, as the lines stand on the frame.
        group.sort((a, b) => a.bbox.y - b.bbox.y || a.bbox.x - b.bbox.x);
        const confidences = group.flatMap((g) => g.confidences);
        const first = group[0] as Shown;
        return {
          content: group.map((g) => g.text).join("\n"),
          locator: {
            timestamp: seconds(first.start),
            timestamp_end: seconds(first.end),
            bbox: boxAround(group.map((g) => g.bbox)),
            source: "screen" as const,
            confidence: Math.round((confidences.reduce((s, c) => s + c, 0) / confidences.length) * 100) / 100,
          },
        };
      })
      .sort((a, b) => a.locator.timestamp - b.locator.timestamp);
  }
}

/**
 * A frame reduced to 32 × 18 mean grey levels. Two frames whose prints differ nowhere by more than
 * a few grey levels show the same thing (compression noise averages out over a cell; a changed
 * line of text does not), and the second need not be read again.
 */
export function framePrint(pgm: Buffer, width: number, height: number): Float64Array {
  const print = new Float64Array(32 * 18);
  const counts = new Float64Array(32 * 18);
  const offset = pgm.length - width * height;
  for (let y = 0; y < height; y += 2) {
    const row = Math.min(17, Math.floor((y * 18) / height));
    for (let x = 0; x < width; x += 2) {
      const cell = row * 32 + Math.min(31, Math.floor((x * 32) / width));
      print[cell] = (print[cell] ?? 0) + (pgm[offset + y * width + x] ?? 0);
      counts[cell] = (counts[cell] ?? 0) + 1;
    }
  }
  for (let i = 0; i < print.length; i++) print[i] = (print[i] ?? 0) / Math.max(1, counts[i] ?? 0);
  return print;
}

/** The largest difference between two prints' cells, in grey levels. */
export function printDistance(a: Float64Array, b: Float64Array): number {
  let most = 0;
  for (let i = 0; i < a.length; i++) most = Math.max(most, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return most;
}
