import { randomUUID } from "node:crypto";
import type { ExtractedPassage } from "@locus/contracts";
import { joinWindow, windowJoins, windowLines, type NumberedLine } from "@locus/passages";
import { SqliteSearchIndex, type PassageHit } from "@locus/search-index";
import { wholeSentences } from "../src/whole-sentences.ts";

// flite.pdf (bench/fixtures/quality), page 27, lines 4-13 as pdftotext reads them: a real page
// whose sentences run across the five-line windows Locus indexes.
const PAGE = [
  "As of 1.2 initial scripts have been added to aid the conversion of FestVox voices to Flite. In",
  "general the conversion cannot be automatic. For example all specific Scheme code written",
  "for a voice needs to be hand converted to C to work in Flite, this can be a major task.",
  "   Simple conversion scripts are given as examples of the stages you need to go through.",
  "These are designed to work on standard (English) diphone sets, and simple limited domain",
  "voices. The conversion technique will almost certainly fail for large unit selection voices",
  "due to limitations in the C compiler (more discussion below). In 1.4 we have also added",
  "support for converting clustergen voices too (which is a little easier, see section below).",
  "8.1 Cocantenative Voice Building",
  "Conversion is basically taking the description of units (clunit catalogue or diphone index)",
];
const box = (line: number) => ({ x: 72, y: 60 + 14 * (line - 4), width: 450, height: 11 });

/** The page's passages as the PDF extractor makes them: windows of five lines sharing one. */
function pagePassages(): ExtractedPassage[] {
  const lines: NumberedLine[] = PAGE.map((text, i) => ({ text, number: i + 4 }));
  return windowLines(lines).map((window) => {
    const first = window[0]!.number;
    const last = window.at(-1)!.number;
    const joins = windowJoins(window);
    return {
      content: joinWindow(window),
      locator: {
        page: 27,
        line: first,
        line_end: last,
        source: "text" as const,
        line_boxes: window.map((l) => box(l.number)),
        ...(joins ? { line_joins: joins } : {}),
      },
    };
  });
}

let index: SqliteSearchIndex;
const userId = randomUUID();
const fileId = randomUUID();

beforeAll(async () => {
  index = new SqliteSearchIndex(":memory:");
  async function* stream() {
    for (const p of pagePassages()) yield await Promise.resolve(p);
  }
  await index.replaceFilePassages({ userId, fileId }, stream());
});
afterAll(() => index.close());

const hitFor = async (word: string): Promise<PassageHit> => {
  const [hit] = await index.search({ userId, text: word, limit: 1 });
  if (!hit) throw new Error(`no passage holds ${word}`);
  return hit;
};

describe("wholeSentences (real SQLite index, a real manual's page)", () => {
  it("widens a passage that ends mid-sentence to the line that finishes its sentence", async () => {
    // The first window, lines 4-8, ends "…simple limited domain": that sentence ends on line 9,
    // where the next begins, which ends on line 11: every sentence whole, read by lines.
    const hit = await hitFor("Scheme");
    expect(hit.locator).toMatchObject({ line: 4, line_end: 8 });
    const [whole] = await wholeSentences(index, userId, [hit]);
    expect(whole?.stored).toMatchObject({ page: 27, line: 4, line_end: 11 });
    expect(whole?.content.split("\n")).toEqual(PAGE.slice(0, 8));
    // Each line keeps its box, so a citation of any sentence narrows to its lines.
    expect(whole?.stored.line_boxes).toEqual([4, 5, 6, 7, 8, 9, 10, 11].map(box));
  });

  it("brings the sentence before a first sentence that points back", async () => {
    // The second window, lines 8-12, starts "These are designed…": what "these" are is on line 7.
    const hit = await hitFor("compiler");
    expect(hit.locator).toMatchObject({ line: 8, line_end: 12 });
    const [whole] = await wholeSentences(index, userId, [hit]);
    expect(whole?.stored).toMatchObject({ line: 7, line_end: 12 });
    expect(whole?.content.split("\n")[0]).toBe(PAGE[3]);
  });

  it("leaves a passage whose edges are sentence ends as it is, and never reads another user's lines", async () => {
    const hit = await hitFor("Cocantenative");
    const [mine] = await wholeSentences(index, userId, [hit]);
    expect(mine?.stored.line).toBeLessThanOrEqual(hit.locator.line!);
    const [theirs] = await wholeSentences(index, randomUUID(), [hit]);
    expect(theirs).toEqual({ content: hit.content, stored: hit.locator });
  });

  it("leaves a recording's passage as it is (no lines to read)", async () => {
    const speech: PassageHit = {
      id: "x",
      fileId,
      ord: 0,
      content: "please leave a message after the tone",
      locator: { timestamp: 4, timestamp_end: 7, source: "speech" },
      score: 1,
    };
    expect(await wholeSentences(index, userId, [speech])).toEqual([
      { content: speech.content, stored: speech.locator },
    ]);
  });
});
