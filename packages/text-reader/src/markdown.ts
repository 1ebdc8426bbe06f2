import MarkdownIt, { type Token } from "markdown-it";
import { HtmlText } from "./html.ts";
import { LineCollector, MAX_TEXT_LINES, type SectionedLine } from "./lines.ts";

/**
 * CommonMark with GitHub's tables and strikethrough (markdown-it's default preset), raw HTML
 * recognised as HTML rather than shown as text, and no linkify or typographic replacements: the
 * text stays as written.
 */
const parser = new MarkdownIt("default", { html: true, linkify: false, typographer: false });

/**
 * The lines of a Markdown document as it reads rendered: the text without its markup (emphasis
 * marks, link targets, images, link definitions, HTML comments and tags), one line per block
 * (paragraph, heading, list item, table row, quote), a paragraph's soft line breaks joined with a
 * space as a browser shows them and its hard breaks kept; code blocks keep their lines as written.
 * Raw HTML is read as HTML, so what it hides (a `<div hidden>` around Markdown too) stays hidden.
 */
export function markdownLines(markdown: string, maxLines = MAX_TEXT_LINES): SectionedLine[] {
  const out = new LineCollector(maxLines);
  const html = new HtmlText(out);

  const inline = (tokens: readonly Token[]): void => {
    for (const token of tokens) {
      switch (token.type) {
        case "html_inline":
          html.write(token.content);
          break;
        case "text":
        case "code_inline":
          if (!html.hidden) out.appendCollapsed(token.content);
          break;
        case "softbreak":
          out.appendCollapsed(" ");
          break;
        case "hardbreak":
          out.endLine();
          break;
        // Images (their alt text is in their own children, never visited), link and emphasis
        // marks: no text of their own.
        default:
          break;
      }
    }
  };

  for (const token of parser.parse(markdown, {})) {
    switch (token.type) {
      case "inline":
        inline(token.children ?? []);
        break;
      case "html_block":
        html.write(token.content);
        break;
      case "fence":
      case "code_block":
        if (html.hidden) break;
        out.endLine();
        out.appendPreformatted(token.content);
        out.endLine();
        break;
      case "heading_open":
        if (!html.hidden) out.startHeading();
        break;
      case "heading_close":
        if (!html.hidden) out.endHeading(Number(token.tag.slice(1)));
        break;
      case "th_open":
      case "td_open":
      case "th_close":
      case "td_close":
        out.separate();
        break;
      default:
        // Paragraphs, list items, quotes, table rows, rules: blocks, each on lines of its own.
        if (token.block) out.endLine();
    }
  }
  html.end();
  return out.finish();
}
