import { Parser } from "htmlparser2";
import { LineCollector, MAX_TEXT_LINES, type SectionedLine } from "./lines.ts";

/** Elements whose content a reader never sees on the page. */
const INVISIBLE = new Set([
  "head",
  "title",
  "script",
  "style",
  "template",
  "noscript",
  "iframe",
  "object",
  "canvas",
  "datalist",
]);

/** Elements that a browser lays out as blocks: each starts and ends a line. */
const BLOCKS = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "caption",
  "center",
  "dd",
  "details",
  "dialog",
  "dir",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "header",
  "hgroup",
  "hr",
  "html",
  "legend",
  "li",
  "main",
  "menu",
  "nav",
  "ol",
  "option",
  "p",
  "pre",
  "section",
  "summary",
  "table",
  "tbody",
  "tfoot",
  "thead",
  "tr",
  "ul",
]);

const HEADING = /^h([1-6])$/;
/** An inline style that hides the element: `display: none` as one of its declarations. */
const DISPLAY_NONE = /(?:^|;)\s*display\s*:\s*none\s*(?:!\s*important\s*)?(?:;|$)/i;

function hides(name: string, attributes: Record<string, string>): boolean {
  return (
    INVISIBLE.has(name) ||
    attributes.hidden !== undefined ||
    attributes["aria-hidden"]?.trim().toLowerCase() === "true" ||
    (name === "input" && attributes.type?.toLowerCase() === "hidden") ||
    DISPLAY_NONE.test(attributes.style ?? "")
  );
}

/**
 * Writes the visible text of HTML into a LineCollector: no scripts, styles, templates, noscript
 * fallbacks or hidden elements (`hidden`, `aria-hidden="true"`, inline `display: none`); block
 * elements and `<br>` end lines, table cells are set apart by a space, `<pre>` keeps its line
 * breaks, entities are decoded. htmlparser2 reads HTML as browsers do for what matters here
 * (implied end tags, void elements, raw-text script and style), streams in one pass over the
 * input, and fetches nothing. The HTML may arrive in pieces (Markdown's raw HTML): the open
 * elements carry over from one to the next.
 */
export class HtmlText {
  /** For each open element: whether it hides its content. */
  private readonly open: boolean[] = [];
  private hiddenDepth = 0;
  private preDepth = 0;
  private readonly parser: Parser;

  constructor(private readonly out: LineCollector) {
    this.parser = new Parser(
      {
        onopentag: (name, attributes) => this.openElement(name, attributes),
        onclosetag: (name) => this.closeElement(name),
        ontext: (text) => this.text(text),
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  /** True inside an element that hides its content. */
  get hidden(): boolean {
    return this.hiddenDepth > 0;
  }

  write(html: string): void {
    this.parser.write(html);
  }

  end(): void {
    this.parser.end();
  }

  private openElement(name: string, attributes: Record<string, string>): void {
    const hiding = hides(name, attributes);
    this.open.push(hiding);
    if (hiding) this.hiddenDepth += 1;
    if (this.hidden) return;
    if (name === "pre") this.preDepth += 1;
    if (HEADING.test(name)) this.out.startHeading();
    else if (BLOCKS.has(name)) this.out.endLine();
    else if (name === "td" || name === "th") this.out.separate();
  }

  private closeElement(name: string): void {
    const hiding = this.open.pop() ?? false;
    if (!this.hidden) {
      if (name === "pre") this.preDepth = Math.max(0, this.preDepth - 1);
      const heading = HEADING.exec(name);
      if (heading?.[1]) this.out.endHeading(Number(heading[1]));
      else if (BLOCKS.has(name) || name === "br") this.out.endLine();
      else if (name === "td" || name === "th") this.out.separate();
    }
    if (hiding) this.hiddenDepth -= 1;
  }

  private text(text: string): void {
    if (this.hidden) return;
    if (this.preDepth > 0) this.out.appendPreformatted(text);
    else this.out.appendCollapsed(text);
  }
}

/** The visible lines of an HTML document, numbered and under their headings. */
export function htmlLines(html: string, maxLines = MAX_TEXT_LINES): SectionedLine[] {
  const out = new LineCollector(maxLines);
  const reader = new HtmlText(out);
  reader.write(html);
  reader.end();
  return out.finish();
}
