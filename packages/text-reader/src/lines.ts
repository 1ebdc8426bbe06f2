import type { NumberedLine } from "@locus/passages";
import { TextReadError } from "./decode.ts";

/** A line of text as a reader sees it, its number and the headings it sits under. */
export interface SectionedLine extends NumberedLine {
  /** The heading path, top level first; empty before the first heading. */
  section: readonly string[];
}

/**
 * The most non-empty lines one file may have: each becomes an object and about a fifth of a
 * passage, so a file of millions of one-character lines would take gigabytes of memory.
 */
export const MAX_TEXT_LINES = 2_000_000;

/** Longest heading text kept in a section path (a heading is a title, not a paragraph). */
const MAX_HEADING_CHARS = 300;

/**
 * Collects rendered text (of HTML or Markdown) into lines, numbering the non-empty ones from 1 as
 * PDF lines are numbered, and keeps the heading path each line sits under.
 */
export class LineCollector {
  readonly lines: SectionedLine[] = [];
  /** The line being written; a rope of appended pieces, flattened once when it ends. */
  private current = "";
  /** Whether the line so far is empty or ends in a space: collapses runs of spaces in O(1). */
  private atSpace = true;
  private headings: { level: number; text: string }[] = [];
  private section: readonly string[] = [];

  constructor(private readonly maxLines = MAX_TEXT_LINES) {}

  /** Adds running text, whose whitespace collapses to single spaces as in a browser. */
  appendCollapsed(text: string): void {
    // Only runs that are not already one space are replaced: replacing every space of a 50 MB
    // line is seconds, a line without other whitespace comes back as it is.
    let collapsed = text.replace(/[ \t\n\r\f\v]{2,}|[\t\n\r\f\v]/g, " ");
    if (this.atSpace && collapsed.startsWith(" ")) collapsed = collapsed.slice(1);
    if (collapsed === "") return;
    this.current += collapsed;
    this.atSpace = collapsed.endsWith(" ");
  }

  /** Adds preformatted text: its line breaks end lines, its spaces are kept. */
  appendPreformatted(text: string): void {
    const parts = text.split(/\r\n|\r|\n/);
    parts.forEach((part, i) => {
      if (i > 0) this.endLine();
      this.current += part;
      this.atSpace = part === "" ? this.atSpace : /\s$/.test(part);
    });
  }

  /** Separates inline pieces that a browser shows apart (table cells): one space. */
  separate(): void {
    if (!this.atSpace) {
      this.current += " ";
      this.atSpace = true;
    }
  }

  /** Ends the current line; an empty or blank line is dropped and takes no number. */
  endLine(): void {
    const text = this.current.trim();
    this.current = "";
    this.atSpace = true;
    if (text === "") return;
    if (this.lines.length >= this.maxLines) {
      throw new TextReadError("too_many_lines", `The file has more than ${this.maxLines} non-empty lines.`);
    }
    this.lines.push({ text, number: this.lines.length + 1, section: this.section });
  }

  /** Starts a heading of `level` (1–6) on a line of its own. */
  startHeading(): void {
    this.endLine();
  }

  /**
   * Ends a heading: its line, and every line after it until the next heading of the same or a
   * higher level, sit under it. An empty heading is no section.
   */
  endHeading(level: number): void {
    const text = this.current.replace(/\s+/g, " ").trim().slice(0, MAX_HEADING_CHARS);
    if (text !== "") {
      this.headings = [...this.headings.filter((h) => h.level < level), { level, text }];
      this.section = this.headings.map((h) => h.text);
    }
    this.endLine();
  }

  /** Ends the last line and returns every line. */
  finish(): SectionedLine[] {
    this.endLine();
    return this.lines;
  }
}
