import { boxAround, type BoundingBox, type ExtractedPassage } from "@locus/contracts";
import {
  DEFAULT_PASSAGE_OPTIONS,
  joinHyphenatedLines,
  joinWindow,
  windowJoins,
  windowLines,
  type Lexicon,
  type PassageOptions,
} from "@locus/passages";
import type { OcrLine, OcrPage, PixelBox } from "./ocr-engine.ts";

export interface OcrPassageOptions extends PassageOptions {
  /** Lines the recogniser is less sure of than this (0–1) are dropped as noise. */
  minConfidence: number;
  /** Tells broken words from compounds at line ends; without one, every break is joined. */
  lexicon?: Lexicon;
}

export const DEFAULT_OCR_PASSAGE_OPTIONS: OcrPassageOptions = {
  ...DEFAULT_PASSAGE_OPTIONS,
  minConfidence: 0.5,
};

/** How the image the recogniser read relates to the page a person sees. */
export interface PageGeometry {
  /** Read pixels per pixel of the page. */
  scale: number;
  /** The read image's size, in its own pixels. */
  width: number;
  height: number;
  /** The page's size, in its own pixels: locators point into this. */
  originalWidth: number;
  originalHeight: number;
}

/** A line worth indexing, numbered from the top, with its box on the page. */
export interface KeptLine {
  text: string;
  number: number;
  confidence: number;
  bbox: BoundingBox;
  /** Its last word was hyphenated and completed from the next line. */
  continues?: boolean;
}

/** A line worth indexing: sure enough, and with at least a letter or a digit in it. */
function isText(line: OcrLine, minConfidence: number): boolean {
  return line.confidence >= minConfidence && /[\p{L}\p{N}]/u.test(line.text);
}

/**
 * A line counted when lines are numbered: one with a letter or a digit, read with at least half
 * the confidence needed to index it. Below that it is taken for a picture's texture read as
 * letters, which a reader would not count as a line.
 */
function isCounted(line: OcrLine, minConfidence: number): boolean {
  return line.confidence >= minConfidence / 2 && /[\p{L}\p{N}]/u.test(line.text);
}

/**
 * Maps a box from the read image back to the page: undoes the recogniser's straightening (a turn
 * about the centre) and the scaling, and clips to the page.
 */
export function toPageBox(box: PixelBox, rotation: number, geometry: PageGeometry): BoundingBox {
  const cx = geometry.width / 2;
  const cy = geometry.height / 2;
  const cos = Math.cos(rotation);
  const sin = Math.sin(rotation);
  const corners = [
    [box.x, box.y],
    [box.x + box.width, box.y],
    [box.x, box.y + box.height],
    [box.x + box.width, box.y + box.height],
  ].map(([x = 0, y = 0]) => {
    // The read image is the page turned by `rotation`; turning its points back by the same angle
    // in the other direction lands them on the page.
    const dx = x - cx;
    const dy = y - cy;
    return [(cx + dx * cos + dy * sin) / geometry.scale, (cy - dx * sin + dy * cos) / geometry.scale];
  });
  const xs = corners.map(([x = 0]) => x);
  const ys = corners.map(([, y = 0]) => y);
  const x0 = Math.max(0, Math.floor(Math.min(...xs)));
  const y0 = Math.max(0, Math.floor(Math.min(...ys)));
  const x1 = Math.min(geometry.originalWidth, Math.ceil(Math.max(...xs)));
  const y1 = Math.min(geometry.originalHeight, Math.ceil(Math.max(...ys)));
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/**
 * Cuts a page's OCR lines into passages: noise dropped, the rest numbered in reading order
 * (1-based, as the page's non-empty lines), grouped into short overlapping runs, each with the box
 * around its lines in page pixels and the mean confidence of its lines.
 */
export function buildOcrPassages(
  page: number,
  read: OcrPage,
  geometry: PageGeometry,
  options: OcrPassageOptions = DEFAULT_OCR_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  const lines = keptLines(read, geometry, options.minConfidence, options.lexicon);
  // A passage's content has one line per page line, with no gap: it never spans a line not kept.
  const windows = consecutiveRuns(lines).flatMap((run) => windowLines(run, options));
  return windows.flatMap((window) => {
    const first = window[0];
    const last = window.at(-1);
    if (!first || !last) return [];
    const confidence = window.reduce((sum, l) => sum + l.confidence, 0) / window.length;
    // One box per page line (a long line cut into pieces is still one line of the content).
    const lineBoxes = window.filter((l, i) => window[i - 1]?.number !== l.number).map((l) => l.bbox);
    const joins = windowJoins(window);
    return [
      {
        content: joinWindow(window),
        locator: {
          page,
          line: first.number,
          line_end: last.number,
          bbox: boxAround(lineBoxes),
          source: "ocr" as const,
          confidence: Math.round(confidence * 100) / 100,
          line_boxes: lineBoxes,
          ...(joins ? { line_joins: joins } : {}),
        },
      },
    ];
  });
}

/**
 * The lines of a reading worth indexing (sure enough, with a letter or a digit), numbered in
 * reading order among the lines counted (see isCounted), each with its box on the page, words
 * hyphenated at line ends made whole.
 */
export function keptLines(
  read: OcrPage,
  geometry: PageGeometry,
  minConfidence: number,
  lexicon?: Lexicon,
): KeptLine[] {
  const lines: KeptLine[] = [];
  let number = 0;
  for (const line of read.lines) {
    if (!isCounted(line, minConfidence)) continue;
    // A line read with less confidence than the threshold is not indexed, but it is still a line
    // the reader sees: it keeps its number, and the lines below keep theirs. Otherwise a heading
    // read at 0.48 instead of 0.50 (one Tesseract build against another) would move every
    // locator below it by a line.
    number += 1;
    if (line.confidence < minConfidence) continue;
    lines.push({
      text: line.text.trim(),
      number,
      confidence: line.confidence,
      bbox: toPageBox(line.bbox, read.rotation, geometry),
    });
  }
  // A word is mended only across lines that follow each other on the page.
  return consecutiveRuns(lines).flatMap((run) => joinHyphenatedLines(run, lexicon));
}

/** Lines cut where a number is skipped (a line counted but not kept). */
function consecutiveRuns(lines: readonly KeptLine[]): KeptLine[][] {
  const runs: KeptLine[][] = [];
  for (const line of lines) {
    const run = runs.at(-1);
    if (run && run.at(-1)?.number === line.number - 1) run.push(line);
    else runs.push([line]);
  }
  return runs;
}

/** The median height of the kept lines, in read pixels: small text reads better scaled up. */
export function medianLineHeight(read: OcrPage, minConfidence: number): number | null {
  const heights = read.lines
    .filter((l) => isText(l, minConfidence))
    .map((l) => l.bbox.height)
    .sort((a, b) => a - b);
  return heights.length === 0 ? null : (heights[Math.floor(heights.length / 2)] ?? null);
}
