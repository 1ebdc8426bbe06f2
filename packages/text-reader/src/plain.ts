import { MAX_TEXT_LINES, type SectionedLine } from "./lines.ts";
import { TextReadError } from "./decode.ts";

/**
 * The lines of a plain text file as written (LF, CRLF or CR endings), numbered as PDF lines are:
 * only non-empty lines count, from 1, so a blank line between paragraphs takes no number. Plain
 * text has no headings: every line's section is empty.
 */
export function plainTextLines(text: string, maxLines = MAX_TEXT_LINES): SectionedLine[] {
  const lines: SectionedLine[] = [];
  const noSection: readonly string[] = [];
  const lineBreak = /\r\n|\r|\n/g;
  let start = 0;
  for (;;) {
    const match = lineBreak.exec(text);
    const end = match ? match.index : text.length;
    const line = text.slice(start, end).trim();
    if (line !== "") {
      if (lines.length >= maxLines) {
        throw new TextReadError("too_many_lines", `The file has more than ${maxLines} non-empty lines.`);
      }
      lines.push({ text: line, number: lines.length + 1, section: noSection });
    }
    if (!match) return lines;
    start = match.index + match[0].length;
  }
}
