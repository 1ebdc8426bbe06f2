import { DEFAULT_PASSAGE_OPTIONS } from "@locus/passages";
import {
  buildTextPassages,
  decodeText,
  htmlLines,
  markdownLines,
  plainTextLines,
  readTextFile,
  TextReadError,
  type SectionedLine,
} from "../src/index.ts";

const texts = (lines: readonly SectionedLine[]) => lines.map((l) => l.text);

describe("plain text lines", () => {
  it("counts only non-empty lines, across LF, CRLF and CR endings, trimmed", () => {
    const lines = plainTextLines("one\r\n\r\n  two  \rthree\n \t \nfour");
    expect(lines.map((l) => [l.number, l.text])).toEqual([
      [1, "one"],
      [2, "two"],
      [3, "three"],
      [4, "four"],
    ]);
    expect(plainTextLines("\n\n")).toEqual([]);
  });
});

describe("HTML visible text", () => {
  it("leaves out scripts, styles, templates, noscript and hidden elements", () => {
    const html = `<!doctype html><html><head><title>Tab title</title><style>p{color:red}</style></head>
      <body><p>shown one</p>
      <script>document.write("<p>from script</p>")</script>
      <template><p>in template</p></template>
      <noscript>enable scripts</noscript>
      <div hidden><p>hidden attribute</p></div>
      <section aria-hidden="true"><p>aria hidden</p></section>
      <p aria-hidden="false">aria shown</p>
      <div style="color: red; DISPLAY : none !important"><p>display none</p><br>more</div>
      <div style="display:block">display block</div>
      <input type="hidden" value="secret">
      <p>shown two</p></body></html>`;
    expect(texts(htmlLines(html))).toEqual(["shown one", "aria shown", "display block", "shown two"]);
  });

  it("starts lines at blocks and <br>, keeps inline elements on the line, decodes entities", () => {
    const html =
      "<div>a <b>bold</b> <i>word</i>&nbsp;&amp; &lt;tag&gt; &#x263A;<br>next<br/><BR>last</div>" +
      "<ul><li>one<li>two</ul><p>implied<p>closed";
    expect(texts(htmlLines(html))).toEqual([
      "a bold word\u00a0& <tag> ☺",
      "next",
      "last",
      "one",
      "two",
      "implied",
      "closed",
    ]);
  });

  it("collapses whitespace except in <pre>, and sets table cells apart on a row's line", () => {
    const html =
      "<p>  spread \n\t over   lines </p><pre>code  one\n\n  code two\n</pre>" +
      "<table><tr><th>name</th><th>uid</th></tr><tr><td>root</td><td>0</td></tr></table>";
    expect(texts(htmlLines(html))).toEqual([
      "spread over lines",
      "code  one",
      "code two",
      "name uid",
      "root 0",
    ]);
  });

  it("gives each line the heading path above it, at any heading level", () => {
    const html =
      "<p>before</p><h1>Guide</h1><p>intro</p><h3>Deep <em>part</em></h3><p>deep</p>" +
      "<h2>Middle</h2><p>mid</p><h2 hidden>Secret</h2><h1></h1><p>still middle</p><h1>Other</h1><p>x</p>";
    expect(htmlLines(html).map((l) => [l.number, l.text, l.section])).toEqual([
      [1, "before", []],
      [2, "Guide", ["Guide"]],
      [3, "intro", ["Guide"]],
      [4, "Deep part", ["Guide", "Deep part"]],
      [5, "deep", ["Guide", "Deep part"]],
      [6, "Middle", ["Guide", "Middle"]],
      [7, "mid", ["Guide", "Middle"]],
      [8, "still middle", ["Guide", "Middle"]],
      [9, "Other", ["Other"]],
      [10, "x", ["Other"]],
    ]);
  });
});

describe("Markdown rendered text", () => {
  it("drops emphasis, link targets, images, link definitions and HTML comments; keeps code", () => {
    const markdown = [
      "Some **bold** and _em_ with a [link](https://example.com/x) and ![a logo](logo.png).",
      "A soft break <!-- a comment --> joins, a `code span` stays,  ",
      "a hard break ends the line.",
      "",
      "See [the guide][guide] and <https://example.org/>.",
      "",
      "[guide]: https://example.com/guide",
      "",
      "```sh",
      "make  install",
      "",
      "make test",
      "```",
      "",
      "> quoted",
      "",
      "1. first",
      "2. second",
      "",
      "| col a | col b |",
      "| ----- | ----- |",
      "| 1     | 2     |",
      "",
      "---",
      "",
      "Tom &amp; Jerry &copy;",
    ].join("\n");
    expect(texts(markdownLines(markdown))).toEqual([
      // One paragraph: its soft break is a space; the image leaves the space before it.
      "Some bold and em with a link and . A soft break joins, a code span stays,",
      "a hard break ends the line.",
      "See the guide and https://example.org/.",
      "make  install",
      "make test",
      "quoted",
      "first",
      "second",
      "col a col b",
      "1 2",
      "Tom & Jerry ©",
    ]);
  });

  it("keeps text that raw HTML hides out, and reads raw HTML's visible text", () => {
    const markdown = [
      "shown",
      "",
      '<div hidden="">',
      "",
      "hidden **markdown**",
      "",
      "# Hidden heading",
      "",
      "</div>",
      "",
      "<details><summary>Click here</summary>",
      "",
      "inside details",
      "",
      "</details>",
      "",
      '<p align="center"><img src="http://127.0.0.1:9/x.png" alt="logo"></p>',
      "",
      "<script>alert('no')</script>",
      "",
      "after",
    ].join("\n");
    expect(markdownLines(markdown).map((l) => [l.text, l.section])).toEqual([
      ["shown", []],
      ["Click here", []],
      ["inside details", []],
      ["after", []],
    ]);
  });

  it("gives ATX and setext headings a section path", () => {
    const markdown = "Title\n=====\n\nintro\n\n### Three\n\nthree\n\nTwo\n---\n\ntwo\n\n# One\nlast";
    expect(markdownLines(markdown).map((l) => [l.number, l.text, l.section])).toEqual([
      [1, "Title", ["Title"]],
      [2, "intro", ["Title"]],
      [3, "Three", ["Title", "Three"]],
      [4, "three", ["Title", "Three"]],
      [5, "Two", ["Title", "Two"]],
      [6, "two", ["Title", "Two"]],
      [7, "One", ["One"]],
      [8, "last", ["One"]],
    ]);
  });
});

describe("passages", () => {
  it("never span two sections, and carry the section only under a heading", () => {
    const html = `<p>a</p><p>b</p><h1>H</h1>${"<p>line</p>".repeat(12)}<h2>Sub</h2><p>z</p>`;
    const passages = buildTextPassages(htmlLines(html));
    expect(passages.map((p) => [p.locator.line, p.locator.line_end, p.locator.section])).toEqual([
      [1, 2, undefined],
      [3, 7, ["H"]],
      [7, 11, ["H"]],
      [11, 15, ["H"]],
      [16, 17, ["H", "Sub"]],
    ]);
    for (const p of passages) {
      expect(p.locator.source).toBe("text");
      expect(p.locator.page).toBeUndefined();
      const { line = 0, line_end = 0 } = p.locator;
      expect(p.content.split("\n")).toHaveLength(line_end - line + 1);
      expect(p.content.length).toBeLessThanOrEqual(DEFAULT_PASSAGE_OPTIONS.maxChars + 4);
    }
  });
});

describe("encodings", () => {
  const text = "Grüße — ☺";
  it("reads UTF-8 with and without a byte order mark", () => {
    expect(decodeText(Buffer.from(text, "utf8"))).toBe(text);
    expect(decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]))).toBe(
      text,
    );
  });

  it("reads UTF-16 little- and big-endian by their byte order mark", () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const be = Buffer.from(le);
    be.swap16();
    expect(decodeText(le)).toBe(text);
    expect(decodeText(be)).toBe(text);
  });

  it("reads bytes that are not UTF-8 as Windows-1252, Latin-1's superset", () => {
    const latin1 = Buffer.from("caf\xe9 ok", "latin1");
    expect(decodeText(latin1)).toBe("café ok");
    expect(readTextFile(latin1, "plain")[0]?.content).toBe("café ok");
    // Its curly quotes and euro sign, where Latin-1 has control codes.
    expect(decodeText(Buffer.from([0x93, 0x80, 0x35, 0x94]))).toBe("“€5”");
  });
});

describe("bounds", () => {
  it("refuses a file over the byte limit, before decoding it", () => {
    const read = () => readTextFile(Buffer.alloc(1001, 0x61), "plain", { maxBytes: 1000 });
    expect(read).toThrow(TextReadError);
    expect(read).toThrow(/1001 bytes; text files are read up to 1000 bytes/);
  });

  it("refuses a file with more non-empty lines than the limit", () => {
    for (const format of ["plain", "markdown", "html"] as const) {
      const body = format === "html" ? "<p>x</p>".repeat(11) : "x\n\n".repeat(11);
      let error: unknown;
      try {
        readTextFile(Buffer.from(body), format, { maxLines: 10 });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(TextReadError);
      expect((error as TextReadError).code).toBe("too_many_lines");
    }
  });

  it.each(["plain", "markdown", "html"] as const)(
    "reads a 50 MB file of one line (%s) in seconds into passages of line 1",
    (format) => {
      const words = "lorem ipsum dolor sit amet consectetur ";
      const line = words.repeat(Math.ceil(50e6 / words.length)).slice(0, 50e6);
      const bytes = Buffer.from(format === "html" ? `<p>${line}</p>` : line);
      const started = performance.now();
      const passages = readTextFile(bytes, format);
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(passages.length).toBeGreaterThan(50e6 / DEFAULT_PASSAGE_OPTIONS.maxChars);
      expect(passages.length).toBeLessThan((50e6 / DEFAULT_PASSAGE_OPTIONS.maxChars) * 1.1);
      for (const p of [passages[0], passages[passages.length >> 1], passages.at(-1)]) {
        expect(p?.locator).toEqual({ line: 1, line_end: 1, source: "text" });
        expect(p?.content.length).toBeLessThanOrEqual(DEFAULT_PASSAGE_OPTIONS.maxChars);
      }
    },
  );
});
