import { randomUUID } from "node:crypto";
import type { ExtractedPassage, StoredLocator } from "@locus/contracts";
import { indexTerms, queryTerms } from "@locus/passages";
import {
  normaliseScore,
  type FilePassages,
  type FileRef,
  type IndexedPassage,
  type SearchIndex,
  type VectorQuery,
  type VectorSlot,
} from "../src/search-index.ts";
import { bm25Score } from "../src/bm25.ts";
import type { VectorSearchOptions } from "../src/vector-matrix.ts";
import { fileFilterCases } from "./search-index-filters.contract.ts";

export interface SearchIndexHarness {
  index: SearchIndex;
  cleanup(): Promise<void>;
}

export interface SearchIndexContractOptions {
  /** For engines that show writes only after a refresh (Elasticsearch): called after each write. */
  settle?: () => Promise<void>;
  /**
   * Why this engine does not score with BM25 on each user's own statistics, if it does not
   * (Elasticsearch: its shard's statistics, Lucene's idf): the test that checks is then skipped,
   * saying so in its name.
   */
  notOnUserStatistics?: string;
}

export async function* streamOf<P extends ExtractedPassage>(passages: readonly P[]): AsyncGenerator<P> {
  for (const p of passages) {
    await Promise.resolve();
    yield p;
  }
}

export const textPassage = (content: string, page = 1, line = 1, lineEnd = line): ExtractedPassage => ({
  content,
  locator: { page, line, line_end: lineEnd, source: "text" },
});

export const HOSTILE_QUERIES: readonly string[] = [
  '"revenue"',
  '"unbalanced',
  "unbalanced'",
  "AND OR NOT",
  "revenue AND",
  "NOT revenue",
  "col:value",
  "content:revenue",
  "tenant:anything",
  "*",
  "revenue*",
  "^revenue",
  "NEAR(a b)",
  "NEAR(revenue growth, 2)",
  "(revenue",
  "revenue)",
  "{content tenant}: revenue",
  "'; DROP TABLE passages; --",
  '"; DELETE FROM passages_fts; --',
  "revenue -growth +profit",
  "🚀📈 revenue 🤖",
  "🚀",
  "x".repeat(1000),
  Array.from({ length: 200 }, (_, i) => `word${i}`).join(" "),
  "revenue ".repeat(150),
  "",
  "   ",
  "\n\t",
  "!!!",
  "...,;:?!@#$%^&*()[]{}<>/\\|`~",
  "\u0000",
  "\u200b",
  "ｒｅｖｅｎｕｅ",
  "révenüe",
];

/**
 * Options and a wrapper that make every vector search of an index (SQLite, Postgres) answered by
 * the user's approximate index: each search is asked once (which builds the index), then again
 * once it has caught up, and the second answer is returned, checked to have come from the graph.
 */
export function viaApproximateIndex(): {
  options: VectorSearchOptions;
  wrap: <T extends SearchIndex & { approximateIndexesSettled(): Promise<void> }>(index: T) => T;
} {
  const methods: string[] = [];
  return {
    options: {
      approximateIndexMinVectors: 1,
      vectorCacheObserver: {
        vectorCacheLookedUp: () => undefined,
        vectorSearched: (method) => methods.push(method),
      },
    },
    wrap: (index) => {
      // The index's own methods, but vectorSearch (an object whose prototype is the index).
      const wrapped = Object.create(index) as typeof index;
      wrapped.vectorSearch = async (query: VectorQuery) => {
        await index.vectorSearch(query);
        await index.approximateIndexesSettled();
        const before = methods.length;
        const hits = await index.vectorSearch(query);
        if (hits.length > 0 && !query.filter) expect(methods.slice(before)).toEqual(["approximate"]);
        return hits;
      };
      return wrapped;
    },
  };
}

/**
 * The behaviour every SearchIndex adapter promises (see the JSDoc in src/search-index.ts). Every
 * test uses fresh random user and file ids, so adapters over a shared engine need no emptying.
 */
export function searchIndexContract(
  name: string,
  make: () => Promise<SearchIndexHarness>,
  options: SearchIndexContractOptions = {},
): void {
  const settle = options.settle ?? (() => Promise.resolve());

  describe(`SearchIndex contract: ${name}`, () => {
    let harness: SearchIndexHarness;
    let index: SearchIndex;

    beforeEach(async () => {
      harness = await make();
      index = harness.index;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    const newFile = (userId: string = randomUUID()): FileRef => ({ userId, fileId: randomUUID() });

    const replace = async (file: FileRef, passages: readonly IndexedPassage[]) => {
      const count = await index.replaceFilePassages(file, streamOf(passages));
      await settle();
      return count;
    };

    const search = (userId: string, text: string, limit = 20) => index.search({ userId, text, limit });

    it("check() succeeds on a usable index", async () => {
      await expect(index.check()).resolves.toBeUndefined();
    });

    it("finds an indexed passage with its file id, content and locator intact", async () => {
      const file = newFile();
      const passage = textPassage(
        "Quarterly revenue grew by twelve percent.\nMargins held steady.",
        2,
        17,
        18,
      );
      expect(await replace(file, [passage, textPassage("An unrelated passage about tea.", 3, 1)])).toBe(2);

      const hits = await search(file.userId, "revenue");
      expect(hits).toHaveLength(1);
      expect(hits[0]).toEqual({
        id: expect.any(String),
        fileId: file.fileId,
        ord: 0,
        content: passage.content,
        locator: passage.locator,
        score: expect.any(Number),
      });
    });

    const onUserStatistics = options.notOnUserStatistics === undefined;
    (onUserStatistics ? it.each : it.skip.each)([
      ["alone in the index", false],
      ["with another user's text in the index", true],
    ])(
      `scores every hit with BM25 on the user's own passages, %s${
        onUserStatistics ? "" : ` (skipped: ${options.notOnUserStatistics})`
      }`,
      async (_, crowded) => {
        const user = randomUUID();
        const mine = [
          [
            "Swap space extends memory onto a disk partition or a swap file.",
            "The kernel moves idle pages to swap.",
          ],
          [
            "A file system keeps files; the swap partition keeps none.",
            "Memory pressure: the kernel swaps, swaps again, and the disk is busy.",
            "Short note on disks.",
            "Partition the disk before making a file system on it, then mount the file system and check it.",
          ],
        ];
        for (const texts of mine)
          await replace(
            newFile(user),
            texts.map((t, i) => textPassage(t, 1, i + 1)),
          );
        // Another user's passages, many and long, full of the same words: they change the index's
        // totals (passages, mean length, how common each word is) but must not change this user's scores.
        const crowd = Array.from({ length: 60 }, (_, i) =>
          textPassage(`swap disk memory file partition kernel ${"filler words ".repeat(i % 7)}number ${i}`),
        );
        if (crowded) await replace(newFile(), crowd);

        const passages = mine.flat().map((content) => ({ content, terms: indexTerms(content) }));
        const stats = {
          passages: passages.length,
          terms: passages.reduce((sum, p) => sum + p.terms.length, 0),
          passagesWith: new Map<string, number>(),
        };
        for (const p of passages)
          for (const t of new Set(p.terms)) stats.passagesWith.set(t, (stats.passagesWith.get(t) ?? 0) + 1);
        for (const query of [
          "swap",
          "swap disk",
          "file system",
          "kernel memory pages",
          "partition disk swap file",
        ]) {
          const terms = queryTerms(query);
          const expected = new Map(
            passages.map((p) => [
              p.content,
              normaliseScore(
                bm25Score(terms, (t) => p.terms.filter((x) => x === t).length, p.terms.length, stats),
              ),
            ]),
          );
          const hits = await search(user, query);
          const want = [...expected.values()].filter((score) => score > 0).sort((a, b) => b - a);
          expect(hits.map((h) => h.score)).toHaveLength(want.length);
          hits.forEach((hit, i) => {
            expect(hit.score).toBeCloseTo(expected.get(hit.content)!, 9);
            expect(hit.score).toBeCloseTo(want[i]!, 9);
          });
        }
      },
    );

    it("keeps every kind of locator as it was given", async () => {
      const file = newFile();
      // With what search narrows them by: each line's box, words completed from the next line,
      // each spoken word's times.
      const locators: StoredLocator[] = [
        { page: 4, line: 1, line_end: 5, source: "text" },
        {
          page: 2,
          line: 7,
          line_end: 8,
          bbox: { x: 72, y: 100, width: 400, height: 30 },
          line_boxes: [
            { x: 72, y: 100, width: 400, height: 14 },
            { x: 72, y: 116, width: 380, height: 14 },
          ],
          line_joins: [0],
          source: "text",
        },
        { page: 1, line: 3, line_end: 3, bbox: { x: 10.5, y: 20, width: 300, height: 14.25 }, source: "ocr" },
        {
          timestamp: 12.5,
          timestamp_end: 19.75,
          word_times: [
            [12.5, 12.9],
            [13, 13.4],
            [13.5, 14],
            [14.1, 19.75],
          ],
          source: "speech",
        },
        { timestamp: 61, timestamp_end: 64, bbox: { x: 0, y: 0, width: 1920, height: 80 }, source: "screen" },
      ];
      await replace(
        file,
        locators.map((locator, i) => ({ content: `pelican number ${i} appears here`, locator })),
      );
      const hits = await search(file.userId, "pelican", 10);
      expect(hits).toHaveLength(locators.length);
      for (const [i, locator] of locators.entries()) {
        expect(hits.find((h) => h.content === `pelican number ${i} appears here`)?.locator).toEqual(locator);
      }
    });

    it("matches regardless of case", async () => {
      const file = newFile();
      await replace(file, [textPassage("The Board approved the BUDGET.")]);
      expect(await search(file.userId, "budget")).toHaveLength(1);
      expect(await search(file.userId, "BOARD Approved")).toHaveLength(1);
    });

    it("finds inflected forms: indexing 'revenues' finds 'revenue' and the other way round", async () => {
      const plural = newFile();
      const singular = newFile(plural.userId);
      await replace(plural, [textPassage("Revenues increased across all regions.")]);
      await replace(singular, [textPassage("Net revenue for the year.")]);
      const forSingular = await search(plural.userId, "revenue");
      expect(forSingular.map((h) => h.fileId).sort()).toEqual([plural.fileId, singular.fileId].sort());
      const forPlural = await search(plural.userId, "revenues");
      expect(forPlural.map((h) => h.fileId).sort()).toEqual([plural.fileId, singular.fileId].sort());
    });

    it.each([
      ["full-width letters and digits", "Ｑ３ ｒｅｖｅｎｕｅ ｒｅｐｏｒｔ", "ｒｅｖｅｎｕｅ"],
      ["a typographic ligature", "The ﬁnancial statements were audited.", "ﬁnancial"],
      ["a superscript digit", "Energy equals mc² in this model.", "mc²"],
      ["accented letters", "Le café du coin, naïve résumé.", "café"],
    ])("a word copied from a passage finds it, even with %s", async (_label, content, query) => {
      const file = newFile();
      await replace(file, [textPassage(content)]);
      expect((await search(file.userId, query)).map((h) => h.content)).toEqual([content]);
    });

    /**
     * One tokenisation: a passage matches a query exactly when they share a term as
     * `indexTerms`/`queryTerms` make them, in every backend. Words chosen where engines used to
     * differ: Porter's rules on short words (SQLite stemmed its tenant-prefixed tokens, so "bed"
     * met "being"), Snowball against Porter ("general", "dying"), diacritics, digits, other
     * scripts, full-width forms and words cut by punctuation.
     */
    it("matches exactly the passages that share a term with the query, as the shared terms say", async () => {
      const file = newFile();
      const contents = [
        "We sing in the choir.",
        "Each s marks a plural.",
        "The bed was made of oak.",
        "Being there mattered.",
        "She gave generously to the fund.",
        "The general manager signed.",
        "The plant was dying slowly.",
        "They die young.",
        "A café on the corner served résumé writers.",
        "The cafe closed at noon.",
        "Version 2024 shipped on 3 May; Q3 figures follow.",
        "Revenues rose; the revenue report is due.",
        "एक हिन्दी वाक्य यहाँ है।",
        "東京の天気は晴れです",
        "Ｑ３ ｒｅｖｅｎｕｅ ｒｅｐｏｒｔ",
        "An e-mail, sent by the well-known editor.",
        "Relational databases and relativity.",
        "Connection, connected, connecting and connections.",
      ];
      await replace(
        file,
        contents.map((c, i) => textPassage(c, 1, i + 1)),
      );
      const queries = [
        "sing",
        "s",
        "bed",
        "being",
        "generous",
        "generously",
        "general",
        "dying",
        "die",
        "cafe",
        "café",
        "resume",
        "2024",
        "q3",
        "revenue",
        "revenues",
        "हिन्दी",
        "東京の天気は晴れです",
        "mail",
        "e-mail",
        "known",
        "relate",
        "relativity",
        "connect",
        "the",
        "oak choir",
      ];
      for (const query of queries) {
        const wanted = new Set(queryTerms(query));
        const expected = contents.filter((c) => indexTerms(c).some((t) => wanted.has(t))).sort();
        const found = (await search(file.userId, query, 50)).map((h) => h.content).sort();
        expect({ query, found }).toEqual({ query, found: expected });
      }
    });

    it("a passage matching any query word is found (words are alternatives, not all required)", async () => {
      const file = newFile();
      await replace(file, [textPassage("Only giraffes here.")]);
      expect(await search(file.userId, "giraffes zeppelin")).toHaveLength(1);
    });

    it("never returns another user's passages, even when the text is identical", async () => {
      const alice = newFile();
      const bob = newFile();
      const same = [textPassage("Confidential merger plan for Acme Corporation.", 1, 1)];
      await replace(alice, same);
      await replace(bob, same);

      const forAlice = await search(alice.userId, "confidential merger acme");
      expect(forAlice.map((h) => h.fileId)).toEqual([alice.fileId]);
      const forBob = await search(bob.userId, "confidential merger acme");
      expect(forBob.map((h) => h.fileId)).toEqual([bob.fileId]);
      expect(await search(randomUUID(), "confidential merger acme")).toEqual([]);
    });

    it("scopes results per user across many users and files", async () => {
      const users = Array.from({ length: 5 }, () => randomUUID());
      const filesByUser = new Map<string, string[]>();
      for (const userId of users) {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const file = newFile(userId);
          ids.push(file.fileId);
          await replace(file, [textPassage(`shared phrase about lighthouses, copy ${i}`)]);
        }
        filesByUser.set(userId, ids);
      }
      for (const userId of users) {
        const hits = await search(userId, "lighthouses", 50);
        expect(hits.map((h) => h.fileId).sort()).toEqual([...filesByUser.get(userId)!].sort());
      }
    });

    it("a user id that differs only in case or dashes is another user", async () => {
      const owner = "6f1c2f9a-1b2c-4d3e-8f40-0123456789ab";
      const file = newFile(owner);
      await replace(file, [textPassage("walrus migration schedule")]);
      expect(await search(owner.toUpperCase(), "walrus")).toEqual([]);
      expect(await search(owner.replace(/-/g, ""), "walrus")).toEqual([]);
      expect(await search(owner, "walrus")).toHaveLength(1);
    });

    it("replacing a file's passages removes the old ones and never duplicates", async () => {
      const file = newFile();
      expect(
        await replace(file, [
          textPassage("alpha version of the contract"),
          textPassage("second alpha clause"),
        ]),
      ).toBe(2);
      expect(await replace(file, [textPassage("beta version of the contract")])).toBe(1);

      expect(await search(file.userId, "alpha")).toEqual([]);
      const hits = await search(file.userId, "contract version");
      expect(hits.map((h) => h.content)).toEqual(["beta version of the contract"]);
    });

    it("replacing with the same passages twice (a redelivered message) gives no duplicates", async () => {
      const file = newFile();
      const passages = [
        textPassage("idempotent indexing of passages", 1, 1),
        textPassage("another idempotent line", 1, 2),
      ];
      await replace(file, passages);
      await replace(file, passages);
      const hits = await search(file.userId, "idempotent");
      expect(hits).toHaveLength(2);
      expect(hits.map((h) => h.locator.line).sort()).toEqual([1, 2]);
    });

    it("replacing one file leaves the user's other files alone", async () => {
      const a = newFile();
      const b = newFile(a.userId);
      await replace(a, [textPassage("orchard apples in file a")]);
      await replace(b, [textPassage("orchard pears in file b")]);
      await replace(a, [textPassage("nothing about fruit now")]);
      expect((await search(a.userId, "orchard")).map((h) => h.fileId)).toEqual([b.fileId]);
    });

    it("replacing with no passages empties the file and returns 0", async () => {
      const file = newFile();
      await replace(file, [textPassage("soon gone")]);
      expect(await replace(file, [])).toBe(0);
      expect(await search(file.userId, "gone")).toEqual([]);
    });

    it("a failing passage stream leaves the previous passages in place and rethrows", async () => {
      const file = newFile();
      await replace(file, [textPassage("stable original passage")]);
      async function* broken(): AsyncGenerator<ExtractedPassage> {
        yield textPassage("partial replacement passage");
        await Promise.resolve();
        throw new Error("extraction stream broke");
      }
      await expect(index.replaceFilePassages(file, broken())).rejects.toThrow("extraction stream broke");
      await settle();
      expect((await search(file.userId, "original")).map((h) => h.content)).toEqual([
        "stable original passage",
      ]);
      expect(await search(file.userId, "replacement")).toEqual([]);
    });

    it("while a replacement is still streaming, searches see only the old set", async () => {
      const file = newFile();
      await replace(file, [textPassage("old passage number one"), textPassage("old passage number two")]);
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let yielded = 0;
      async function* slow(): AsyncGenerator<ExtractedPassage> {
        yield textPassage("new passage number one");
        yielded += 1;
        await held;
        yield textPassage("new passage number two");
        yielded += 1;
      }
      const replacing = index.replaceFilePassages(file, slow());
      while (yielded === 0) await new Promise((resolve) => setTimeout(resolve, 5));

      const during = await search(file.userId, "passage", 10);
      expect(during.map((h) => h.content).sort()).toEqual([
        "old passage number one",
        "old passage number two",
      ]);

      release();
      expect(await replacing).toBe(2);
      await settle();
      const after = await search(file.userId, "passage", 10);
      expect(after.map((h) => h.content).sort()).toEqual([
        "new passage number one",
        "new passage number two",
      ]);
    });

    it("indexes a stream of many passages, all of them searchable", async () => {
      const file = newFile();
      const passages = Array.from({ length: 1_234 }, (_, i) =>
        textPassage(
          `bulk passage ${i} mentions token${i} and the common word heron`,
          Math.floor(i / 10) + 1,
          (i % 10) + 1,
        ),
      );
      expect(await replace(file, passages)).toBe(1_234);
      const last = await search(file.userId, "token1233");
      expect(last).toHaveLength(1);
      expect(last[0]?.locator).toEqual({ page: 124, line: 4, line_end: 4, source: "text" });
      expect(await search(file.userId, "token0")).toHaveLength(1);
      expect(await search(file.userId, "token617")).toHaveLength(1);
      expect(await search(file.userId, "heron", 2_000)).toHaveLength(1_234);
    });

    it("rebuild() indexes every file given, in place of what each held, and counts files and passages", async () => {
      const a = newFile();
      const b = newFile(a.userId);
      await replace(a, [textPassage("stale kestrel")]);
      async function* files(): AsyncGenerator<FilePassages> {
        yield { file: a, passages: streamOf([textPassage("fresh kestrel"), textPassage("fresh falcon")]) };
        await Promise.resolve();
        yield { file: b, passages: streamOf([textPassage("another kestrel")]) };
      }
      expect(await index.rebuild(files())).toEqual({ files: 2, passages: 3 });
      await settle();
      const hits = await search(a.userId, "kestrel falcon");
      expect(hits.map((h) => h.content).sort()).toEqual(["another kestrel", "fresh falcon", "fresh kestrel"]);
    });

    it("deleteFilePassages removes the file's passages and only those", async () => {
      const gone = newFile();
      const kept = newFile(gone.userId);
      await replace(gone, [textPassage("kingfisher sighting near the river")]);
      await replace(kept, [textPassage("kingfisher nest in the bank")]);
      await index.deleteFilePassages(gone);
      await settle();
      expect((await search(gone.userId, "kingfisher")).map((h) => h.fileId)).toEqual([kept.fileId]);
    });

    it("deleteFilePassages of a file with no passages is not an error", async () => {
      await expect(index.deleteFilePassages(newFile())).resolves.toBeUndefined();
    });

    it("deleteFilePassages with another user's id deletes nothing", async () => {
      const file = newFile();
      await replace(file, [textPassage("protected passage about otters")]);
      await index.deleteFilePassages({ userId: randomUUID(), fileId: file.fileId });
      await settle();
      expect(await search(file.userId, "otters")).toHaveLength(1);
    });

    describe("passagesInRanges", () => {
      const lines = (file: FileRef, count: number) =>
        replace(
          file,
          Array.from({ length: count }, (_, i) =>
            textPassage(`passage number ${i} of ${file.fileId}`, 1, i + 1),
          ),
        );
      const read = (userId: string, ranges: { fileId: string; from: number; to: number }[]) =>
        index.passagesInRanges({ userId, ranges });

      it("gives the passages of each range in file and ord order, once each, with the ids search gives", async () => {
        const first = newFile();
        const second = newFile(first.userId);
        await lines(first, 10);
        await lines(second, 4);
        const hits = await read(first.userId, [
          { fileId: second.fileId, from: 2, to: 5 },
          { fileId: first.fileId, from: 6, to: 8 },
          { fileId: first.fileId, from: 3, to: 4 },
          { fileId: second.fileId, from: 1, to: 2 },
        ]);
        expect(hits.map((h) => [h.fileId, h.ord, h.score])).toEqual([
          [second.fileId, 1, 0],
          [second.fileId, 2, 0],
          [second.fileId, 3, 0],
          [first.fileId, 3, 0],
          [first.fileId, 4, 0],
          [first.fileId, 6, 0],
          [first.fileId, 7, 0],
          [first.fileId, 8, 0],
        ]);
        expect(hits[0]?.content).toBe(`passage number 1 of ${second.fileId}`);
        expect(hits[0]?.locator).toEqual({ page: 1, line: 2, line_end: 2, source: "text" });
        const [found] = await search(first.userId, `number 7 ${first.fileId}`, 1);
        expect(found?.id).toBe(hits[6]?.id);
        expect(found?.ord).toBe(7);
      });

      it("never reads another user's passages, and cuts ranges to their limits", async () => {
        const mine = newFile();
        await lines(mine, 40);
        expect(await read(randomUUID(), [{ fileId: mine.fileId, from: 0, to: 5 }])).toEqual([]);
        expect(await read(mine.userId, [])).toEqual([]);
        expect(await read(mine.userId, [{ fileId: mine.fileId, from: 5, to: 2 }])).toEqual([]);
        const wide = await read(mine.userId, [{ fileId: mine.fileId, from: -3, to: 39 }]);
        expect(wide.map((h) => h.ord)).toEqual(Array.from({ length: 16 }, (_, i) => i));
      });
    });

    it("returns at most `limit` results", async () => {
      const file = newFile();
      await replace(
        file,
        Array.from({ length: 30 }, (_, i) => textPassage(`limit test passage ${i} about sparrows`, 1, i + 1)),
      );
      expect(await search(file.userId, "sparrows", 5)).toHaveLength(5);
      expect(await search(file.userId, "sparrows", 1)).toHaveLength(1);
      expect(await search(file.userId, "sparrows", 100)).toHaveLength(30);
    });

    it("orders results best first, with scores in [0, 1)", async () => {
      const file = newFile();
      await replace(file, [
        textPassage(
          "A long passage that mentions inflation only once among many other words about weather, tea, gardens and trains.",
          1,
          1,
        ),
        textPassage("Inflation, inflation, inflation: inflation everywhere.", 1, 2),
        textPassage("Inflation and interest rates rose together.", 1, 3),
        // Unrelated passages, so that "inflation" is not in most of the corpus (BM25 gives such words no weight).
        ...[
          "Nothing relevant at all.",
          "Gardens in spring.",
          "Trains run late.",
          "Tea is served at four.",
        ].map((t, i) => textPassage(t, 1, 4 + i)),
      ]);
      const hits = await search(file.userId, "inflation interest");
      expect(hits).toHaveLength(3);
      for (const hit of hits) {
        expect(hit.score).toBeGreaterThan(0);
        expect(hit.score).toBeLessThan(1);
      }
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
      // Both query words beat one word once in a long passage.
      expect(hits.at(-1)?.locator.line).toBe(1);
      expect(hits.findIndex((h) => h.locator.line === 3)).toBeLessThan(
        hits.findIndex((h) => h.locator.line === 1),
      );
    });

    it("a query that matches nothing returns an empty array", async () => {
      const file = newFile();
      await replace(file, [textPassage("some text")]);
      expect(await search(file.userId, "xylophone")).toEqual([]);
    });

    describe("vectors", () => {
      /** A unit vector of 4 dimensions pointing mostly along `axis`. */
      const unit = (...values: number[]) => {
        const length = Math.hypot(...values);
        return Float32Array.from(values, (v) => v / length);
      };
      const withVectors = (
        content: string,
        line: number,
        vectors: Partial<Record<VectorSlot, Float32Array>>,
        space = "test-space",
      ): IndexedPassage => ({
        ...textPassage(content, 1, line),
        vectors: Object.fromEntries(
          Object.entries(vectors).map(([slot, vector]) => [slot, { space, vector }]),
        ),
      });
      const nearest = (
        userId: string,
        vector: Float32Array,
        limit = 10,
        slot: VectorSlot = "local",
        space = "test-space",
      ) => index.vectorSearch({ userId, slot, space, vector, limit });

      it("finds the nearest passages first, with cosine scores in [0, 1], at most `limit`", async () => {
        const file = newFile();
        await replace(file, [
          withVectors("due north", 1, { local: unit(1, 0, 0, 0) }),
          withVectors("north by east", 2, { local: unit(1, 0.5, 0, 0) }),
          withVectors("due east", 3, { local: unit(0, 1, 0, 0) }),
          withVectors("due south", 4, { local: unit(-1, 0, 0, 0) }),
        ]);
        const hits = await nearest(file.userId, unit(1, 0.1, 0, 0));
        expect(hits.map((h) => h.content)).toEqual(["due north", "north by east", "due east", "due south"]);
        expect(hits[0]).toEqual({
          id: expect.any(String),
          fileId: file.fileId,
          ord: 0,
          content: "due north",
          locator: { page: 1, line: 1, line_end: 1, source: "text" },
          score: expect.any(Number),
        });
        expect(hits[0]!.score).toBeCloseTo(0.995, 2);
        expect(hits[3]!.score).toBe(0);
        for (let i = 1; i < hits.length; i++)
          expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
        expect(await nearest(file.userId, unit(1, 0, 0, 0), 2)).toHaveLength(2);
      });

      it("a passage has the same id in keyword and vector search", async () => {
        const file = newFile();
        await replace(file, [withVectors("albatross over the sea", 1, { local: unit(0, 0, 1, 0) })]);
        const [byWords] = await search(file.userId, "albatross");
        const [byVector] = await nearest(file.userId, unit(0, 0, 1, 0));
        expect(byVector?.id).toBe(byWords?.id);
      });

      it("compares only vectors of the query's slot and space, and skips passages without one", async () => {
        const file = newFile();
        await replace(file, [
          withVectors("local only", 1, { local: unit(1, 0, 0, 0) }),
          withVectors("remote only", 2, { remote: unit(1, 0, 0, 0) }),
          withVectors("both", 3, { local: unit(0, 1, 0, 0), remote: unit(0, 1, 0, 0) }),
          withVectors("another space", 4, { local: unit(1, 0, 0, 0) }, "other-space"),
          textPassage("no vectors at all", 1, 5),
        ]);
        const local = await nearest(file.userId, unit(1, 0, 0, 0));
        expect(local.map((h) => h.content)).toEqual(["local only", "both"]);
        const remote = await nearest(file.userId, unit(1, 0, 0, 0), 10, "remote");
        expect(remote.map((h) => h.content)).toEqual(["remote only", "both"]);
        const other = await nearest(file.userId, unit(1, 0, 0, 0), 10, "local", "other-space");
        expect(other.map((h) => h.content)).toEqual(["another space"]);
        expect(await nearest(file.userId, unit(1, 0, 0, 0), 10, "local", "no-such-space")).toEqual([]);
      });

      it("never returns another user's passages", async () => {
        const mine = newFile();
        const theirs = newFile();
        await replace(mine, [withVectors("mine", 1, { local: unit(0, 1, 0, 0) })]);
        await replace(theirs, [withVectors("theirs", 1, { local: unit(1, 0, 0, 0) })]);
        expect((await nearest(mine.userId, unit(1, 0, 0, 0))).map((h) => h.content)).toEqual(["mine"]);
        expect(await nearest(randomUUID(), unit(1, 0, 0, 0))).toEqual([]);
      });

      it("a replaced or deleted file's old vectors are never found again", async () => {
        const file = newFile();
        const other = newFile(file.userId);
        await replace(file, [withVectors("old version", 1, { local: unit(1, 0, 0, 0) })]);
        await replace(other, [withVectors("other file", 1, { local: unit(0, 0, 0, 1) })]);
        expect((await nearest(file.userId, unit(1, 0, 0, 0), 1))[0]?.content).toBe("old version");

        await replace(file, [withVectors("new version", 1, { local: unit(0, 1, 0, 0) })]);
        const afterReplace = await nearest(file.userId, unit(1, 0, 0, 0));
        expect(afterReplace.map((h) => h.content).sort()).toEqual(["new version", "other file"]);

        await index.deleteFilePassages(file);
        await settle();
        expect((await nearest(file.userId, unit(1, 0, 0, 0))).map((h) => h.content)).toEqual(["other file"]);
      });

      it("a limit of 0 or a query of another length returns nothing rather than failing", async () => {
        const file = newFile();
        await replace(file, [withVectors("four dimensions", 1, { local: unit(1, 0, 0, 0) })]);
        expect(await nearest(file.userId, unit(1, 0, 0, 0), 0)).toEqual([]);
        expect(await nearest(file.userId, unit(1, 0, 0))).toEqual([]);
      });
    });

    describe("any text is a safe query", () => {
      let file: FileRef;
      const passages = [
        textPassage("Revenue growth and profit were strong; NEAR the col value of AND OR NOT words.", 1, 1),
        textPassage("DROP TABLE passages is a phrase in this document.", 1, 2),
      ];

      beforeEach(async () => {
        file = newFile();
        await replace(file, passages);
      });

      it.each(HOSTILE_QUERIES.map((q) => [q.length > 60 ? `${q.slice(0, 40)}… (${q.length} chars)` : q, q]))(
        "query %j returns the passages sharing a word with it, without throwing",
        async (_label, query) => {
          const hits = await search(file.userId, query);
          expect(Array.isArray(hits)).toBe(true);
          // Exactly the passages that share a word with the query (words are alternatives): an
          // adapter that swallowed a hostile query into an empty list would pass the loop below.
          const wanted = new Set(queryTerms(query));
          const expected = passages
            .filter((p) => indexTerms(p.content).some((t) => wanted.has(t)))
            .map((p) => p.locator.line);
          expect(hits.map((h) => h.locator.line).sort()).toEqual(expected);
          for (const hit of hits) {
            expect(hit.fileId).toBe(file.fileId);
            expect(hit.score).toBeGreaterThanOrEqual(0);
            expect(hit.score).toBeLessThan(1);
          }
        },
      );

      it("operators and punctuation are words or separators, never syntax", async () => {
        expect((await search(file.userId, '"revenue')).map((h) => h.locator.line)).toEqual([1]);
        expect((await search(file.userId, "content:revenue")).map((h) => h.locator.line)).toEqual([1]);
        expect((await search(file.userId, "NOT revenue")).map((h) => h.locator.line)).toContain(1);
        expect((await search(file.userId, "revenue*")).map((h) => h.locator.line)).toEqual([1]);
      });

      it("empty, blank and punctuation-only queries return no results", async () => {
        for (const query of ["", "   ", "!!!", "...,;:?", "🚀", "\u200b"]) {
          expect(await search(file.userId, query)).toEqual([]);
        }
      });

      it("an injection attempt leaves the index intact", async () => {
        await search(file.userId, "'; DROP TABLE passages; --");
        await search(file.userId, '"); DELETE FROM passages; --');
        expect(await search(file.userId, "revenue")).toHaveLength(1);
        expect(await search(file.userId, "drop table")).toHaveLength(1);
      });
    });

    fileFilterCases({ index: () => index, settle });
  });
}
