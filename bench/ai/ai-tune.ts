/**
 * A quick harness to tune ai mode's ranking on the development set, with no server:
 *
 *   node --import tsx bench/ai/ai-tune.ts [--size 100000] [--set dev|test] [--rebuild]
 *
 * Builds an in-process SqliteSearchIndex holding `--size` real-text distractor passages
 * (bench/corpus/real-text.ts) and the handbook of the 60 paraphrase statements (test and dev sets, one a
 * page), every passage with its local vector as the indexer writes it, and keeps the index file in
 * bench/.cache/ai-tune so that a rerun takes seconds (rebuilt when the corpus, the statements or
 * the embedder's sources change, or with --rebuild). Then, for each question of the set, it ranks
 * the passages with each ranker below and prints hit@1, hit@5 and hit@50, and where each question's
 * statement lands.
 *
 * Rankers are functions `(question, index, embedder) => hits`, best first: to try an idea, add one
 * to RANKERS (or change `rankAi`, which ai mode itself ranks with) and rerun. Tune on the dev
 * set; `--set test` is for reporting what the tuning did, not for choosing anything.
 *
 * What it leaves out from ai mode as the server runs it: files that are not ready (there are none
 * here) and overlapping passages of one page collapsed into one result, which can only move a
 * statement up a little.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CACHE_DIR, ROOT } from "../harness/paths.ts";
import { HANDBOOK, statementPassages, writeRealTextFiles } from "./ai-search.ts";
import {
  LocalEmbedder,
  rankAi,
  SentenceEncoder,
  type Embedder,
  SqliteSearchIndex,
  withVectors,
  type PassageHit,
  type SearchIndex,
} from "../harness/deps.ts";
import { REAL_TEXT_SOURCES, REAL_TEXT_VERSION, realTextPassages } from "../corpus/real-text.ts";
import { asAsync } from "../search/search-latency.ts";

/** Candidates each list brings, as ai mode asks for them for a page of up to 25 results. */
const POOL = 50;
const USER_ID = "ai-tune-user";
const HANDBOOK_FILE = "ai-tune-handbook";

/** The index as a ranker sees it: one user's passages, by keyword or by vector. */
export interface TuneIndex {
  search(text: string, limit: number): Promise<PassageHit[]>;
  vectorSearch(vector: Float32Array, limit: number, space: string): Promise<PassageHit[]>;
}

export type Ranker = (question: string, index: TuneIndex, embedder: Embedder) => Promise<PassageHit[]>;

const bm25: Ranker = (question, index) => index.search(question, POOL);

const vectors: Ranker = async (question, index, embedder) => {
  const [vector] = await embedder.embed([question]);
  if (!vector || vector.every((v) => v === 0)) return [];
  return index.vectorSearch(vector, POOL, embedder.space);
};

/**
 * ai mode's ranking as SearchService ranks (rankAi in services/search/src/hybrid-ranking.ts): BM25
 * and the vectors above their floor, fused by reciprocal rank.
 */
const aiMode: Ranker = async (question, index, embedder) => {
  const [keyword, semantic] = await Promise.all([
    bm25(question, index, embedder),
    vectors(question, index, embedder),
  ]);
  return rankAi(question, keyword, semantic, embedder.matching).map((f) => f.hit);
};

/** BM25 and the vectors above the engine's floor, fused with the vectors' votes weighted `weight`. */
const weighted =
  (weight: number): Ranker =>
  async (question, index, embedder) => {
    const [keyword, semantic] = await Promise.all([
      bm25(question, index, embedder),
      vectors(question, index, embedder),
    ]);
    return rankAi(question, keyword, semantic, { ...embedder.matching, weight }).map((f) => f.hit);
  };

/** The last ranker is the one whose misses are listed: keep ai mode's own ranking last. */
export const RANKERS: { name: string; rank: Ranker }[] = [
  { name: "BM25 alone", rank: bm25 },
  { name: "vectors alone", rank: vectors },
  { name: "vectors x1", rank: weighted(1) },
  { name: "vectors x2", rank: weighted(2) },
  { name: "vectors x4", rank: weighted(4) },
  { name: "ai mode (rankAi)", rank: aiMode },
];

// ------------------------------------------------------------------ the index, cached

const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

/** What the cached index depends on: the corpus, the statements, and how vectors are made. */
function cacheKey(size: number, embedder: Embedder): string {
  const embedderSources = join(ROOT, "packages", "embedder", "src");
  const sources = readdirSync(embedderSources)
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => sha(readFileSync(join(embedderSources, f))));
  return sha(
    JSON.stringify({
      size,
      corpus: [REAL_TEXT_VERSION, REAL_TEXT_SOURCES.map((s) => `${s.pkg}=${s.version}`)],
      statements: HANDBOOK.map((p) => p.statement),
      space: embedder.space,
      sources,
    }),
  ).slice(0, 16);
}

async function buildIndex(path: string, size: number, embedder: Embedder): Promise<void> {
  const started = performance.now();
  const log = (line: string) => console.log(`[ai-tune] ${line}`);
  const passages = realTextPassages(size, log);
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const index = new SqliteSearchIndex(tmp);
  try {
    const embedding: Pick<SearchIndex, "replaceFilePassages"> = {
      replaceFilePassages: (file, ps) =>
        index.replaceFilePassages(file, withVectors(ps, { local: embedder })),
    };
    log(`writing ${size} passages with their vectors into ${path} ...`);
    await writeRealTextFiles(null, embedding, USER_ID, passages);
    await embedding.replaceFilePassages(
      { userId: USER_ID, fileId: HANDBOOK_FILE },
      asAsync(statementPassages()),
    );
  } finally {
    await index.close();
  }
  for (const suffix of ["", "-wal", "-shm"])
    if (existsSync(tmp + suffix)) renameSync(tmp + suffix, path + suffix);
  log(`built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

// ------------------------------------------------------------------ the run

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "100000" },
    set: { type: "string", default: "dev" },
    rebuild: { type: "boolean", default: false },
    sources: { type: "boolean", default: false },
    embedder: { type: "string", default: "encoder" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "Usage: node --import tsx bench/ai/ai-tune.ts [--size 100000] [--set dev|test] [--embedder encoder|words] [--rebuild] [--sources]\n" +
      "  --embedder  the sentence encoder (default) or the word vectors it falls back on\n" +
      "  --sources  also count which corpus the passages above the statements come from (draws the corpus, ~10 s)",
  );
  process.exit(0);
}
const size = Number(values.size);
if (!Number.isInteger(size) || size <= 0) {
  console.error(`--size must be a positive integer, got "${values.size}"`);
  process.exit(2);
}
if (values.set !== "dev" && values.set !== "test") {
  console.error(`--set must be dev or test, got "${values.set}"`);
  process.exit(2);
}
const set = values.set;
if (set === "test")
  console.log("[ai-tune] the TEST set: report what tuning did with it, but choose nothing by it.");

if (values.embedder !== "encoder" && values.embedder !== "words") {
  console.error(`--embedder must be encoder or words, got "${values.embedder}"`);
  process.exit(2);
}
const embedder: Embedder =
  values.embedder === "words" ? await LocalEmbedder.load() : await SentenceEncoder.load();
const dir = join(CACHE_DIR, "ai-tune");
mkdirSync(dir, { recursive: true });
const path = join(dir, `index-${size}-${values.embedder}-${cacheKey(size, embedder)}.sqlite`);
if (values.rebuild || !existsSync(path)) {
  for (const f of readdirSync(dir).filter((f) => f.startsWith(`index-${size}-${values.embedder}-`)))
    rmSync(join(dir, f), { force: true });
  await buildIndex(path, size, embedder);
} else console.log(`[ai-tune] reusing ${path} (--rebuild to make it again)`);

const sqlite = new SqliteSearchIndex(path);
const index: TuneIndex = {
  search: (text, limit) => sqlite.search({ userId: USER_ID, text, limit }),
  vectorSearch: (vector, limit, space) =>
    sqlite.vectorSearch({ userId: USER_ID, slot: "local", space, vector, limit }),
};
const questions = HANDBOOK.filter((p) => p.set === set);
try {
  // The first vector search loads the user's vectors into memory: not part of any question's time.
  await vectors("warm up", index, embedder);
  // ...and starts its approximate index, which answers ai mode's vector searches once built, as in the server.
  await sqlite.approximateIndexesSettled();
} catch (err) {
  console.error(
    `[ai-tune] the cached index does not answer (${String(err)}); if the index's storage changed, rerun with --rebuild`,
  );
  process.exit(1);
}

/** Where each question's statement lands in each ranker's list (1-based; null beyond the list). */
const ranks = new Map<string, (number | null)[]>();
const timings: number[] = [];
const firstWrong = new Map<string, string>();
/** The passages ai fusion put in the top 5 that are not the question's statement. */
const intruders: string[] = [];
for (const { name, rank } of RANKERS) {
  const started = performance.now();
  const placed: (number | null)[] = [];
  for (const p of questions) {
    const hits = await rank(p.question, index, embedder);
    const at = hits.findIndex((h) => h.fileId === HANDBOOK_FILE && h.locator.page === p.page);
    placed.push(at < 0 ? null : at + 1);
    if (name === RANKERS.at(-1)?.name) {
      if (at !== 0 && hits[0]) firstWrong.set(p.question, hits[0].content.replace(/\s+/g, " ").slice(0, 90));
      intruders.push(...hits.slice(0, 5).flatMap((h, i) => (i === at ? [] : [h.content])));
    }
  }
  timings.push((performance.now() - started) / questions.length);
  ranks.set(name, placed);
}
await sqlite.close();

const within = (placed: (number | null)[], k: number) => placed.filter((r) => r !== null && r <= k).length;
const n = questions.length;
console.log(
  `\n${set} set, ${n} questions, ${size.toLocaleString("en")} real-text distractors + 60 statements`,
);
console.log(
  `${"ranker".padEnd(30)} ${"hit@1".padStart(7)} ${"hit@5".padStart(7)} ${"hit@50".padStart(7)} ${"MRR".padStart(6)} ${"ms/q".padStart(6)}`,
);
RANKERS.forEach(({ name }, i) => {
  const placed = ranks.get(name)!;
  const mrr = placed.reduce<number>((sum, r) => sum + (r === null ? 0 : 1 / r), 0) / n;
  console.log(
    `${name.padEnd(30)} ${`${within(placed, 1)}/${n}`.padStart(7)} ${`${within(placed, 5)}/${n}`.padStart(7)} ${`${within(placed, 50)}/${n}`.padStart(7)} ${mrr.toFixed(3).padStart(6)} ${(timings[i] ?? 0).toFixed(1).padStart(6)}`,
  );
});

const last = RANKERS.at(-1)!.name;
const short = RANKERS.map(({ name }) => name.split(" ")[0]!);
console.log(
  `\nQuestions whose statement ${last} leaves out of the top 5 (rank in each list; - = not in the top ${POOL}):`,
);
console.log(`  ${short.map((s) => s.padStart(8)).join("")}  question  ->  what came first instead`);
questions.forEach((p, i) => {
  const placedByLast = ranks.get(last)![i];
  if (placedByLast !== null && placedByLast !== undefined && placedByLast <= 5) return;
  const cells = RANKERS.map(({ name }) => String(ranks.get(name)![i] ?? "-").padStart(8)).join("");
  console.log(`  ${cells}  ${p.question}  ->  ${firstWrong.get(p.question) ?? ""}`);
});

if (values.sources) {
  const sourceOf = new Map(realTextPassages(size).map((p) => [p.content, p.source]));
  const counts = new Map<string, number>();
  for (const content of intruders) {
    const source = sourceOf.get(content) ?? "the handbook (another statement)";
    counts.set(source, (counts.get(source) ?? 0) + 1);
  }
  console.log(`\nWhere the ${intruders.length} other passages in ${last}'s top 5 come from:`);
  for (const [source, count] of [...counts].sort((a, b) => b[1] - a[1]))
    console.log(`  ${source.padEnd(34)} ${count}`);
}
