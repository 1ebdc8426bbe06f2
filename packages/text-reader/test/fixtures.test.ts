import { readFileSync } from "node:fs";
import type { ExtractedPassage } from "@locus/contracts";
import { ExtractedPassage as ExtractedPassageSchema } from "@locus/contracts";
import { htmlLines, readTextFile, type TextFormat } from "../src/index.ts";

const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url));
const squeeze = (text: string) => text.replace(/\s+/g, " ").trim();

function read(name: string, format: TextFormat): ExtractedPassage[] {
  const passages = readTextFile(fixture(name), format);
  for (const passage of passages) ExtractedPassageSchema.parse(passage);
  return passages;
}

/**
 * Where a phrase is: the line of the passage's content it is on, as a page line number, and the
 * passage's section. Every passage holding it must agree (windows overlap by one line).
 */
function whereIs(passages: readonly ExtractedPassage[], phrase: string) {
  const places = passages.flatMap((p) => {
    const at = p.content.split("\n").findIndex((line) => squeeze(line).includes(phrase));
    return at < 0 ? [] : [{ line: (p.locator.line ?? 0) + at, section: p.locator.section }];
  });
  expect(places.length).toBeGreaterThan(0);
  for (const place of places) expect(place).toEqual(places[0]);
  return places[0];
}

const allText = (passages: readonly ExtractedPassage[]) => passages.map((p) => p.content).join("\n");

describe("plain text: base-passwd's README", () => {
  const passages = read("base-passwd-README.txt", "plain");

  it("numbers non-empty lines as written, as `grep -v '^[[:space:]]*$' | grep -n` does", () => {
    expect(whereIs(passages, "Reserved gids:")).toEqual({ line: 52, section: undefined });
    expect(whereIs(passages, "(Next uid/gid allocation: 64070.)")).toEqual({ line: 76, section: undefined });
    expect(whereIs(passages, "Debian reserves that range for future use.")).toEqual({
      line: 9,
      section: undefined,
    });
  });

  it("has no section and keeps every line once", () => {
    expect(passages.every((p) => p.locator.section === undefined)).toBe(true);
    expect(passages.at(-1)?.locator.line_end).toBe(87 - 8); // 87 lines, 8 of them blank (grep -c)
  });
});

describe("Markdown: httplib2's README (setext and ATX headings, lists, fenced code)", () => {
  const passages = read("httplib2-README.md", "markdown");

  it("finds phrases on the rendered line, under their heading path (hand count)", () => {
    // Rendered: "Introduction" (1), its paragraph (2), then each "###" heading and its paragraph
    // on a line each (3–8), the three list items (9–11), Caching 12–13, All Methods 14–15,
    // Redirects 16–17.
    expect(whereIs(passages, "Automatically follows 3XX redirects on GETs.")).toEqual({
      line: 17,
      section: ["Introduction", "Redirects"],
    });
    expect(whereIs(passages, "WSSE")).toEqual({ line: 11, section: ["Introduction", "Authentication"] });
    // "Installation" (24), its indented code block (25).
    expect(whereIs(passages, "$ pip install httplib2")).toEqual({ line: 25, section: ["Installation"] });
    // "Usage" 26, "A simple retrieval:" 27, code 28–30, two paragraphs 31–32, code from 33.
    expect(whereIs(passages, "h.add_credentials('name', 'password')")).toEqual({
      line: 35,
      section: ["Usage"],
    });
  });

  it("joins a paragraph's soft line breaks and drops the markup", () => {
    expect(
      whereIs(passages, "keeping the socket open and performing multiple requests over the same connection"),
    ).toEqual({ line: 6, section: ["Introduction", "Keep-Alive"] });
    const text = allText(passages);
    for (const markup of ["###", "```", "====", "* Digest"]) expect(text).not.toContain(markup);
  });
});

describe("Markdown: git's README (an image link, reference links, autolinks, code spans)", () => {
  const passages = read("git-README.md", "markdown");

  it("shows links' text without their targets, and no image", () => {
    const text = allText(passages);
    expect(text).not.toContain("badge.svg");
    expect(text).not.toContain("Build status");
    expect(text).not.toContain("github.com/git/git/actions");
    expect(text).not.toContain("[INSTALL]");
    expect(whereIs(passages, "Please read the file INSTALL for installation instructions.")?.line).toBe(4);
  });

  it("finds a phrase on its rendered line (hand count: the title is line 1, each paragraph one line)", () => {
    expect(whereIs(passages, 'the tool as "the stupid content tracker"')).toEqual({
      line: 13,
      section: ["Git - fast, scalable, distributed revision control system"],
    });
  });
});

/** The Chromium-rendered lines beside an HTML fixture (see fixtures/README.md). */
const chromiumLines = (name: string) =>
  fixture(name)
    .toString("utf8")
    .split("\n")
    .filter((l) => l !== "");

describe.each([
  ["libffi-Memory-Usage.html", "libffi-Memory-Usage.chromium.txt"],
  ["base-passwd-users-and-groups.html", "base-passwd-users-and-groups.chromium.txt"],
  ["rickshaw-examples-index.html", "rickshaw-examples-index.chromium.txt"],
])("HTML: %s", (name, rendered) => {
  it("gives the lines Chromium shows, in order", () => {
    const lines = htmlLines(fixture(name).toString("utf8"));
    expect(lines.map((l) => squeeze(l.text))).toEqual(chromiumLines(rendered).map(squeeze));
    expect(lines.map((l) => l.number)).toEqual(lines.map((_, i) => i + 1));
  });
});

describe("HTML: real pages", () => {
  it("libffi: a list item on Chromium's line, under its h2; no style, comment or title text", () => {
    const passages = read("libffi-Memory-Usage.html", "html");
    expect(whereIs(passages, "memfd_create(), if the kernel supports it.")).toEqual({
      line: 5,
      section: ["3 Memory Usage"],
    });
    // Before the first heading: the navigation bar, with `&nbsp;` decoded.
    expect(whereIs(passages, "Up: libffi")?.section).toBeUndefined();
    expect(whereIs(passages, "home directory ($HOME)")?.line).toBe(11); // &rsquo; decoded
    expect(allText(passages)).toContain("user’s home directory");
    const text = allText(passages);
    for (const hidden of ["visibility: hidden", "Permission is hereby granted", "Memory Usage (libffi"]) {
      expect(text).not.toContain(hidden);
    }
  });

  it("base-passwd's DocBook page: upper-case tags, h1 > h2 sections", () => {
    const passages = read("base-passwd-users-and-groups.html", "html");
    expect(whereIs(passages, "Postgresql databases are owned by this user and group.")).toEqual({
      line: 51,
      section: ["Chapter 2. Users and Groups"],
    });
    expect(whereIs(passages, "Copyright © 2005 David Mandelberg")?.line).toBe(6);
  });

  it("rickshaw's examples: no style or script text, sections from h1 and h2", () => {
    const passages = read("rickshaw-examples-index.html", "html");
    expect(whereIs(passages, "Basic scatter plot with two overlapping series.")).toEqual({
      line: 9,
      section: ["Rickshaw Examples", "Scatter Plot with Multiple Series"],
    });
    expect(allText(passages)).not.toContain("font-family");
    // A page that is only a chart drawn by its inline script shows no text at all.
    const simple = fixture("rickshaw-examples-simple.html").toString("utf8");
    expect(simple).toContain("graph.render()");
    expect(htmlLines(simple)).toEqual([]);
  });
});
