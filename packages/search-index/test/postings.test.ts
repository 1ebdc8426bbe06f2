import { bm25Score } from "../src/bm25.ts";
import { PostingsCache, UserPostings, type PostingsFile, type PostingsRow } from "../src/postings.ts";

/** A seeded generator, so a failure can be run again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ["the", "of", "file", "font", "system", "option", "swap", "xterm", "cache", "voice"];

let nextId = 1;
/** A file of passages drawn from WORDS, skewed so the first words are in most passages. */
function fileOf(fileId: string, version: string, passages: number, random: () => number): PostingsFile {
  const rows: PostingsRow[] = [];
  for (let p = 0; p < passages; p++) {
    const length = 1 + Math.floor(random() * 40);
    const counts = new Map<string, number>();
    for (let i = 0; i < length; i++) {
      const word = WORDS[Math.floor(random() ** 2 * WORDS.length)]!;
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
    const repeats = Object.fromEntries([...counts].filter(([, n]) => n > 1));
    rows.push({
      id: String(nextId++),
      termCount: length,
      terms: [...counts.keys()],
      repeats: Object.keys(repeats).length > 0 ? repeats : null,
    });
  }
  return { fileId, version, rows };
}

/** The same ranking computed the slow way: every live passage scored with bm25Score, sorted. */
function oracle(files: Map<string, PostingsFile>, terms: string[], limit: number) {
  const rows = [...files.values()].flatMap((f) => f.rows);
  const tf = (row: PostingsRow, term: string) => (row.terms.includes(term) ? (row.repeats?.[term] ?? 1) : 0);
  const stats = {
    passages: rows.length,
    terms: rows.reduce((sum, r) => sum + r.termCount, 0),
    passagesWith: new Map(terms.map((t) => [t, rows.filter((r) => tf(r, t) > 0).length])),
  };
  return rows
    .map((row) => ({ id: row.id, score: bm25Score(terms, (t) => tf(row, t), row.termCount, stats) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id))
    .slice(0, limit);
}

const QUERIES = [
  ["the"],
  ["the", "of"],
  ["file", "system", "option"],
  ["xterm"],
  ["voice", "the"],
  ["absent"],
];

function expectSameAsOracle(postings: UserPostings, files: Map<string, PostingsFile>) {
  for (const terms of QUERIES) {
    for (const limit of [1, 5, 50]) {
      const got = postings.top(terms, limit);
      const want = oracle(files, terms, limit);
      expect(got.map((g) => g.id)).toEqual(want.map((w) => w.id));
      got.forEach((g, i) => expect(g.score).toBeCloseTo(want[i]!.score, 12));
    }
  }
}

describe("UserPostings (a user's postings in memory, for PostgreSQL's quick search)", () => {
  it("ranks like bm25Score on the live passages, through additions, replacements, removals and compaction", () => {
    const random = rng(7);
    const postings = new UserPostings();
    const files = new Map<string, PostingsFile>();
    for (let f = 0; f < 8; f++) files.set(`f${f}`, fileOf(`f${f}`, "1", 30, random));
    postings.apply("1", [], [...files.values()]);
    expect(postings.generation).toBe("1");
    expectSameAsOracle(postings, files);

    // Replace two files (new versions, new passages) and remove one: below the compaction share.
    for (const id of ["f1", "f5"]) files.set(id, fileOf(id, "2", 20, random));
    files.delete("f3");
    postings.apply("2", ["f3"], [files.get("f1")!, files.get("f5")!]);
    expect([...postings.versions()].sort()).toEqual(
      [...files.values()].map((f) => [f.fileId, f.version] as [string, string]).sort(),
    );
    expectSameAsOracle(postings, files);

    // Remove most files: the dead slots pass a quarter, the lists are rewritten.
    for (const id of ["f0", "f2", "f4", "f6"]) files.delete(id);
    postings.apply("3", ["f0", "f2", "f4", "f6"], []);
    expectSameAsOracle(postings, files);

    // And it keeps working after the rewrite.
    files.set("f9", fileOf("f9", "4", 25, random));
    postings.apply("4", [], [files.get("f9")!]);
    expectSameAsOracle(postings, files);
  });

  it("breaks ties by id, and finds nothing for a user without passages", () => {
    const postings = new UserPostings();
    expect(postings.top(["the"], 5)).toEqual([]);
    const same = { termCount: 3, terms: ["the", "cat"], repeats: null };
    postings.apply(
      "1",
      [],
      [
        {
          fileId: "a",
          version: "1",
          rows: [
            { id: "20", ...same },
            { id: "3", ...same },
          ],
        },
      ],
    );
    expect(postings.top(["cat"], 5).map((h) => h.id)).toEqual(["3", "20"]);
    postings.apply("2", ["a"], []);
    expect(postings.top(["cat"], 5)).toEqual([]);
  });
});

describe("UserPostings with a file filter", () => {
  it("scores only the passages of the files given, with the scores the whole user's statistics give them, after compaction too", () => {
    const random = rng(7);
    const files = ["a", "b", "c", "d"].map((id) => fileOf(id, "1", 30, random));
    const postings = new UserPostings();
    postings.apply("1", [], files);
    const only = new Set(["b", "d"]);
    const ids = (file: PostingsFile) => new Set(file.rows.map((r) => r.id));
    const allowed = new Set([...ids(files[1]!), ...ids(files[3]!)]);
    for (const terms of [["swap"], ["file", "system"], ["the", "voice", "cache"]]) {
      const whole = postings.top(terms, 10_000);
      const filtered = postings.top(terms, 7, only);
      // The best 7 of those files' passages, each with its unfiltered score.
      expect(filtered).toEqual(whole.filter((h) => allowed.has(h.id)).slice(0, 7));
    }
    // Files removed (compacting the slots) and a filter naming a removed or unknown file.
    postings.apply("2", ["a", "c"], []);
    const afterwards = postings.top(["swap"], 10_000);
    expect(postings.top(["swap"], 10_000, new Set(["a", "d", "nowhere"]))).toEqual(
      afterwards.filter((h) => ids(files[3]!).has(h.id)),
    );
    expect(postings.top(["swap"], 5, new Set())).toEqual([]);
  });
});

describe("PostingsCache", () => {
  const userOf = (passages: number) => {
    const postings = new UserPostings();
    postings.apply("1", [], [fileOf("f", "1", passages, rng(passages))]);
    return postings;
  };

  it("keeps users within its budget, least recently used out first", () => {
    const a = userOf(50);
    const b = userOf(50);
    const cache = new PostingsCache(Math.floor(a.bytes() * 1.5) + b.bytes());
    expect(cache.keep("a", a)).toBe(true);
    expect(cache.keep("b", b)).toBe(true);
    expect(cache.get("a")).toBe(a); // a is now the most recent
    expect(cache.keep("c", userOf(50))).toBe(true);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(a);
  });

  it("does not keep a user larger than the whole budget, nor try again until a while has passed", () => {
    const big = userOf(200);
    const cache = new PostingsCache(big.bytes() - 1, 60_000);
    expect(cache.mayLoad("big", 0)).toBe(true);
    expect(cache.keep("big", big, 0)).toBe(false);
    expect(cache.get("big")).toBeUndefined();
    expect(cache.mayLoad("big", 59_999)).toBe(false);
    expect(cache.mayLoad("big", 60_000)).toBe(true);
    expect(new PostingsCache(0).mayLoad("anyone")).toBe(false);
  });
});
