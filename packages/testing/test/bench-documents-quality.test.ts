import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  documentLineHit,
  documentLinesAway,
  type DocumentQualityFixtures,
} from "../../../bench/quality/documents-quality-truth.ts";
import { tokensOf } from "../../../bench/quality/quality-truth.ts";

/**
 * The line queries of `pnpm bench --only documents-quality` (bench/fixtures/documents/queries.json):
 * their truth agrees with the independent line counts kept beside the text fixtures, each query's
 * words are on its truth line, and a result is judged right only on the truth's page and line.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const fixtures = JSON.parse(
  readFileSync(join(ROOT, "bench/fixtures/documents/queries.json"), "utf8"),
) as DocumentQualityFixtures;

const nonEmptyLines = (text: string) =>
  text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

describe("bench/fixtures/documents/queries.json", () => {
  test("names files that exist, and draws queries from every kind", () => {
    for (const f of fixtures.files) expect(readFileSync(join(ROOT, f.path)).length).toBe(f.bytes);
    const kinds = new Set(fixtures.queries.map((q) => q.kind));
    expect(kinds).toEqual(new Set(["writer", "presentation", "spreadsheet", "text"]));
    expect(new Set(fixtures.queries.map((q) => q.id)).size).toBe(fixtures.queries.length);
  });

  test("each query is 3 words of its truth line; office truths have a page, text truths none", () => {
    for (const q of fixtures.queries) {
      const words = q.q.split(" ");
      expect(words).toHaveLength(3);
      const onLine = new Set(tokensOf(q.text));
      for (const w of words) expect(onLine.has(w)).toBe(true);
      expect(q.page === null).toBe(q.kind === "text");
    }
  });

  test("plain and HTML truths are the lines the independent counts give (grep -v blank, Chromium's innerText)", () => {
    const checked = fixtures.files.filter((f) => f.format === "plain" || f.format === "html");
    expect(checked.length).toBeGreaterThan(0);
    for (const f of checked) {
      const source =
        f.format === "plain" ? join(ROOT, f.path) : join(ROOT, f.path.replace(/\.html$/, ".chromium.txt"));
      const lines = nonEmptyLines(readFileSync(source, "utf8"));
      expect(lines).toHaveLength(f.lines);
      for (const q of fixtures.queries.filter((x) => x.file === f.name))
        expect(lines[q.line - 1]).toBe(q.text);
    }
  });
});

describe("documentLineHit and documentLinesAway", () => {
  const office = { page: 3, line: 7 };
  const text = { page: null, line: 7 };

  test("a result is right on the truth's page with a range holding the line", () => {
    expect(documentLineHit(office, { page: 3, line: 5, line_end: 8 })).toBe(true);
    expect(documentLineHit(office, { page: 3, line: 7 })).toBe(true);
    expect(documentLineHit(office, { page: 4, line: 7 })).toBe(false);
    expect(documentLineHit(office, { page: 3, line: 8, line_end: 9 })).toBe(false);
    expect(documentLineHit(office, { line: 7 })).toBe(false);
  });

  test("a text truth has no page: a result with one is on no page of it", () => {
    expect(documentLineHit(text, { line: 6, line_end: 7 })).toBe(true);
    expect(documentLineHit(text, { page: 1, line: 7 })).toBe(false);
  });

  test("lines away: 0 when the range holds the line, else the gap to the nearer end", () => {
    expect(documentLinesAway(office, { line: 5, line_end: 8 })).toBe(0);
    expect(documentLinesAway(office, { line: 10, line_end: 12 })).toBe(3);
    expect(documentLinesAway(office, { line: 1, line_end: 4 })).toBe(3);
    expect(documentLinesAway(office, {})).toBeNull();
  });
});
