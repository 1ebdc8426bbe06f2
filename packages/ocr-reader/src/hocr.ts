// hOCR is XHTML: its text and attributes are unescaped by the library the HTML parsers use.
import { decodeXML } from "entities";
import type { CornerBox, RecognisedLine } from "./ocr-engine.ts";

/** The hOCR classes Tesseract gives a line of text (headings, captions and floating text are lines too). */
const LINE_CLASSES = new Set(["ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"]);

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return match ? decodeXML(match[1] ?? match[2] ?? "") : undefined;
}

/** The numbers of one property of an hOCR title ("bbox 1 2 3 4; x_wconf 96"), or undefined. */
function property(title: string, name: string): number[] | undefined {
  for (const part of title.split(";")) {
    const [key, ...values] = part.trim().split(/\s+/);
    if (key !== name) continue;
    const numbers = values.map(Number);
    return numbers.every(Number.isFinite) ? numbers : undefined;
  }
  return undefined;
}

function box(title: string): CornerBox | undefined {
  const [x0, y0, x1, y1] = property(title, "bbox") ?? [];
  if (x0 === undefined || y0 === undefined || x1 === undefined || y1 === undefined) return undefined;
  return { x0, y0, x1, y1 };
}

interface LineInProgress {
  bbox: CornerBox;
  baseline: CornerBox | undefined;
  words: string[];
  confidences: number[];
}

/**
 * The lines of Tesseract's hOCR output, in its reading order, each with its box, its baseline
 * (hOCR gives it as slope and offset from the box's bottom-left corner) and its confidence: the
 * mean of its words' (Tesseract's own line confidence is the mean of its words' certainties).
 */
export function parseHocr(hocr: string): RecognisedLine[] {
  const lines: RecognisedLine[] = [];
  let line: LineInProgress | undefined;
  const finish = () => {
    if (line && line.words.length > 0) {
      const confidence = line.confidences.reduce((sum, c) => sum + c, 0) / (line.confidences.length || 1);
      lines.push({
        text: line.words.join(" "),
        confidence,
        bbox: line.bbox,
        ...(line.baseline ? { baseline: line.baseline } : {}),
      });
    }
    line = undefined;
  };
  // Tesseract writes no span inside a word (without hocr_char_boxes), so a word runs to the next
  // closing span; any other markup in it (<strong>, <em>) is dropped.
  const tags = /<span\b([^>]*)>|<\/(?:p|div|body)\s*>/gi;
  for (let match = tags.exec(hocr); match; match = tags.exec(hocr)) {
    const tag = match[1];
    if (tag === undefined) {
      // The end of a paragraph or an area ends its line.
      finish();
      continue;
    }
    const classes = (attribute(tag, "class") ?? "").split(/\s+/);
    const title = attribute(tag, "title") ?? "";
    if (classes.some((c) => LINE_CLASSES.has(c))) {
      finish();
      const bbox = box(title);
      if (!bbox) continue;
      const [slope, offset] = property(title, "baseline") ?? [];
      const baseline =
        slope !== undefined && offset !== undefined
          ? {
              x0: bbox.x0,
              y0: bbox.y1 + offset,
              x1: bbox.x1,
              y1: bbox.y1 + offset + slope * (bbox.x1 - bbox.x0),
            }
          : undefined;
      line = { bbox, baseline, words: [], confidences: [] };
    } else if (classes.includes("ocrx_word") && line) {
      const end = hocr.indexOf("</span>", tags.lastIndex);
      const inner = hocr.slice(tags.lastIndex, end === -1 ? hocr.length : end);
      if (end !== -1) tags.lastIndex = end + "</span>".length;
      const text = decodeXML(inner.replace(/<[^>]*>/g, "")).trim();
      if (text.length === 0) continue;
      line.words.push(text);
      line.confidences.push(property(title, "x_wconf")?.[0] ?? 0);
    }
  }
  finish();
  return lines;
}
