/** A piece of text pdf.js found on a page, reduced to what line building needs. */
export interface TextPiece {
  text: string;
  /** Left edge, in PDF units. */
  x: number;
  /** Baseline, in PDF units from the bottom of the page. */
  y: number;
  width: number;
  /** Font size, in PDF units. */
  height: number;
}

import { boxAround, type BoundingBox } from "@locus/contracts";

/** A line of text as a reader sees it. */
export interface TextLine {
  text: string;
  /** 1-based, counting non-empty lines from the top of the page. */
  number: number;
  /** Where the line is on the page, in PDF points from the page's top-left corner. */
  bbox?: BoundingBox;
  /** Its last word was hyphenated and completed from the next line (see joinHyphenatedLines). */
  continues?: boolean;
}

/** Maps a point in PDF units (y up from the bottom) to the page as shown (points, y down from the top). */
export type ToPagePoint = (x: number, y: number) => [number, number];

/** How far below the baseline and above it a line's letters reach, as shares of its font size. */
const DESCENT = 0.25;
const ASCENT = 0.9;

/**
 * Rebuilds reading-order lines from positioned text pieces: pieces whose baselines lie within
 * half a font height belong to one line; lines run top to bottom, pieces left to right, and a gap
 * wider than a fraction of the font size becomes a space.
 */
export function buildLines(pieces: readonly TextPiece[], toPage?: ToPagePoint): TextLine[] {
  const visible = pieces.filter((p) => p.text.trim().length > 0);
  visible.sort((a, b) => b.y - a.y || a.x - b.x);

  const rows: { y: number; height: number; pieces: TextPiece[] }[] = [];
  for (const piece of visible) {
    const tolerance = Math.max(1, 0.5 * Math.max(piece.height, 1));
    // Baselines inside one row drift a little (superscripts, mixed fonts); compare with the row's first.
    const row = rows.find((r) => Math.abs(r.y - piece.y) <= Math.max(tolerance, 0.5 * r.height));
    if (row) row.pieces.push(piece);
    else rows.push({ y: piece.y, height: piece.height, pieces: [piece] });
  }
  rows.sort((a, b) => b.y - a.y);

  const lines: TextLine[] = [];
  for (const row of rows) {
    row.pieces.sort((a, b) => a.x - b.x);
    let text = "";
    let lastEnd: number | null = null;
    for (const p of row.pieces) {
      const gap = lastEnd === null ? 0 : p.x - lastEnd;
      const needsSpace =
        lastEnd !== null &&
        gap > 0.15 * Math.max(p.height, 1) &&
        !text.endsWith(" ") &&
        !p.text.startsWith(" ");
      text += (needsSpace ? " " : "") + p.text;
      lastEnd = p.x + p.width;
    }
    const clean = text.replace(/\s+/g, " ").trim();
    if (clean.length === 0) continue;
    lines.push({
      text: clean,
      number: lines.length + 1,
      ...(toPage ? { bbox: lineBox(row.pieces, toPage) } : {}),
    });
  }
  return lines;
}

/**
 * The box around a row's visible pieces on the page as shown: from the lowest descender to the
 * highest ascender of its fonts, mapped through the page's view (rotation, crop box offset).
 */
function lineBox(pieces: readonly TextPiece[], toPage: ToPagePoint): BoundingBox {
  const corners = pieces
    .filter((p) => p.text.trim().length > 0)
    .map((p) => {
      const size = Math.max(p.height, 1);
      const [x0, y0] = toPage(p.x, p.y - DESCENT * size);
      const [x1, y1] = toPage(p.x + p.width, p.y + ASCENT * size);
      return {
        x: Math.min(x0, x1),
        y: Math.min(y0, y1),
        width: Math.abs(x1 - x0),
        height: Math.abs(y1 - y0),
      };
    });
  const box = boxAround(corners);
  const round = (n: number) => Math.round(n * 10) / 10;
  return { x: round(box.x), y: round(box.y), width: round(box.width), height: round(box.height) };
}
