// @ts-check
// Dates, sizes, times and places in words, and a passage's matched words marked.
import { h } from "./ui.js";

/** @typedef {import("@locus/contracts").Locator} Locator */
/** @typedef {import("@locus/contracts").HighlightDto} HighlightDto */

/** @param {string | null | undefined} iso */
export const formatDate = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

/** @param {number} n */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

/** @param {number} s */
export function formatSeconds(s) {
  const whole = Math.floor(s);
  const m = Math.floor(whole / 60);
  const sec = String(whole % 60).padStart(2, "0");
  return m >= 60 ? `${Math.floor(m / 60)}:${String(m % 60).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/**
 * Where a passage is, in words: "Page 3, line 17", "Lines 4–6 of page 2", "0:42–0:50".
 * @param {Locator | null | undefined} locator
 */
export function describeLocator(locator) {
  if (!locator) return "";
  if (locator.timestamp !== undefined) {
    const end = locator.timestamp_end !== undefined ? `–${formatSeconds(locator.timestamp_end)}` : "";
    const what = locator.source === "screen" ? "on screen" : "spoken";
    return `${formatSeconds(locator.timestamp)}${end} (${what})`;
  }
  const parts = [];
  if (locator.page !== undefined) parts.push(`Page ${locator.page}`);
  if (locator.line !== undefined) {
    const lines =
      locator.line_end !== undefined && locator.line_end !== locator.line
        ? `lines ${locator.line}–${locator.line_end}`
        : `line ${locator.line}`;
    // A text document has no pages: its lines count from the top of the document.
    parts.push(parts.length === 0 ? lines.charAt(0).toUpperCase() + lines.slice(1) : lines);
  }
  // Under a heading of a Markdown or HTML document: the path of headings.
  if (locator.section && locator.section.length > 0) parts.push(`in “${locator.section.join(" › ")}”`);
  return parts.join(", ");
}

/**
 * `content` with its highlights ({start, end} in code points, end exclusive) as <mark> elements:
 * text nodes and elements, never HTML. Spans out of range or overlapping are clipped.
 * @param {string} content
 * @param {HighlightDto[] | undefined} highlights
 * @returns {(string | HTMLElement)[]}
 */
export function withMarks(content, highlights) {
  if (!Array.isArray(highlights) || highlights.length === 0) return [content];
  const chars = Array.from(content);
  const spans = highlights
    .filter((s) => Number.isInteger(s?.start) && Number.isInteger(s?.end))
    .map((s) => /** @type {[number, number]} */ ([Math.max(0, s.start), Math.min(chars.length, s.end)]))
    .sort((a, b) => a[0] - b[0]);
  /** @type {(string | HTMLElement)[]} */
  const parts = [];
  let at = 0;
  for (const [start, end] of spans) {
    const from = Math.max(start, at);
    if (end <= from) continue;
    if (from > at) parts.push(chars.slice(at, from).join(""));
    parts.push(h("mark", {}, chars.slice(from, end).join("")));
    at = end;
  }
  if (at < chars.length) parts.push(chars.slice(at).join(""));
  return parts;
}
