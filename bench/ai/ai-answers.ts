import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { FIXTURES_DIR } from "../harness/paths.ts";
import { assertRunning, shutDown, track } from "../harness/cleanup.ts";
import { client, createUserWithKey, isStopWord, words } from "../harness/deps.ts";
import { withServer, withTempDir } from "../harness/harness.ts";
import { createUsersWithIds, loadFixtures, searchJson, TENANTS, uploadReady } from "../quality/quality.ts";
import { documentHit, type ResultLocator } from "../quality/quality-truth.ts";
import { quantile, round } from "../harness/stats.ts";

/**
 * Whether ai mode's summary answers the question (`pnpm bench --only ai`, after ai-search; or on
 * its own for tuning: `node --import tsx bench/ai/ai-answers.ts --help`). Hand-written questions
 * about the three real manuals of bench/fixtures/quality (answers.json; ai-questions.json until it
 * exists), each with the sentence that answers it and that sentence's lines (pdftotext -layout),
 * plus questions the manuals do not answer. The three PDFs are uploaded as one user (the quality
 * benchmark's PDF user, with its fixed id: same index, same ranks), then every question is asked
 * in ai mode, one at a time.
 */
export interface AiAnswersOptions {
  /** Results asked for per question (what the summary is written from). */
  limit: number;
  readyTimeoutMs: number;
  sets: QuestionSet[];
  /** Share of the answer's content words the summary must hold for a hit. */
  minContentShare: number;
  /** A data directory kept between runs (files uploaded once); null: a temporary one. */
  keepDir: string | null;
  /** Every question's outcome in the result (for the CLI), not only the misses. */
  details: boolean;
}

export type QuestionSet = "dev" | "test";

export const DEFAULT_AI_ANSWERS_OPTIONS: AiAnswersOptions = {
  limit: 10,
  readyTimeoutMs: 15 * 60_000,
  sets: ["dev", "test"],
  minContentShare: 0.6,
  keepDir: null,
  details: false,
};

const FIXTURES = join(FIXTURES_DIR, "quality");
const ANSWERS = join(FIXTURES, "answers.json");
const FALLBACK = join(FIXTURES, "ai-questions.json");
const EMAIL = "ai-answers@bench.invalid";
/** The quality benchmark's PDF user: the same id gives the same ranks on the same files. */
const USER_ID = TENANTS.pdf;

interface AnswerableQuestion {
  id: string;
  set: QuestionSet;
  q: string;
  answerable: true;
  file: string;
  page: number;
  line: number;
  lineEnd: number;
  text: string;
  answer: string;
}
interface UnanswerableQuestion {
  id: string;
  set: QuestionSet;
  q: string;
  answerable: false;
  why: string;
}
export type AnswerQuestion = AnswerableQuestion | UnanswerableQuestion;

/** A question as answers.json holds it, before it is checked (bench/ai/answers-check.ts checks it against the manuals). */
export interface RawQuestion {
  id?: string;
  set?: string;
  q?: string;
  answerable?: boolean;
  file?: string;
  page?: number;
  line?: number;
  lineEnd?: number;
  text?: string;
  answer?: string;
  why?: string;
}

/** Lines joined with " / " (pdftotext), as one line: a word cut at a line's end mended. */
export function joinLines(text: string): string {
  return text
    .split(" / ")
    .reduce((joined, line) =>
      joined === ""
        ? line
        : /\p{Ll}-$/u.test(joined) && /^\p{Ll}/u.test(line)
          ? joined.slice(0, -1) + line
          : `${joined} ${line}`,
    );
}

/** The questions: answers.json when it exists, else ai-questions.json (all test, answer = the truth lines). */
export function loadQuestions(): { from: string; written: string; questions: AnswerQuestion[] } {
  const own = existsSync(ANSWERS);
  const raw = JSON.parse(readFileSync(own ? ANSWERS : FALLBACK, "utf8")) as {
    written?: string;
    questions: RawQuestion[];
  };
  const questions = raw.questions.map((r, i): AnswerQuestion => {
    const where = `${own ? "answers.json" : "ai-questions.json"} question ${r.id ?? i}`;
    const set = own ? r.set : "test";
    if (typeof r.id !== "string" || typeof r.q !== "string" || (set !== "dev" && set !== "test"))
      throw new Error(`${where}: needs id, q and set (dev or test)`);
    if (r.answerable === false) return { id: r.id, set, q: r.q, answerable: false, why: r.why ?? "" };
    const { file, page, line, lineEnd, text } = r;
    if (
      typeof file !== "string" ||
      typeof page !== "number" ||
      typeof line !== "number" ||
      typeof lineEnd !== "number" ||
      typeof text !== "string"
    )
      throw new Error(`${where}: an answerable question needs file, page, line, lineEnd and text`);
    const answer = own ? r.answer : joinLines(text);
    if (typeof answer !== "string" || answer.trim() === "") throw new Error(`${where}: needs an answer`);
    return { id: r.id, set, q: r.q, answerable: true, file, page, line, lineEnd, text, answer };
  });
  return {
    from: own
      ? "bench/fixtures/quality/answers.json"
      : "bench/fixtures/quality/ai-questions.json (answers.json not written yet: all taken as test, the answer is the truth lines joined)",
    written: raw.written ?? "",
    questions,
  };
}

/** Words of a text with ai mode's markers ([1], [2]) left out, a word cut by a hyphen and a space mended. */
const plainWords = (text: string): string[] =>
  words(text.replace(/\s*\[\d+\]/g, "").replace(/(\p{Ll})-\s+(\p{Ll})/gu, "$1$2"));

/** The distinct content words of a text (stop words dropped). */
export const contentWords = (text: string): string[] => [
  ...new Set(plainWords(text).filter((w) => !isStopWord(w))),
];

/** Share of the answer's content words that the summary holds (1 when the answer has none). */
export function contentShare(answer: string, summary: string): number {
  const need = contentWords(answer);
  if (need.length === 0) return 1;
  const have = new Set(plainWords(summary));
  return need.filter((w) => have.has(w)).length / need.length;
}

/** The answer's words, all of them, one after another somewhere in the summary (markers ignored). */
export function holdsWhole(answer: string, summary: string): boolean {
  const need = plainWords(answer);
  const have = plainWords(summary);
  if (need.length === 0) return false;
  for (let start = 0; start + need.length <= have.length; start++)
    if (need.every((w, i) => have[start + i] === w)) return true;
  return false;
}

interface Citation {
  n: number;
  file_id: string;
  original_name: string;
  locator: ResultLocator;
  quote: string;
  result_index: number;
}
interface AiResponse {
  results: { file_id: string; locator: ResultLocator }[];
  summary?: string;
  citations?: Citation[];
  answered?: boolean;
  summary_source?: string;
  vector_source?: string;
}

/** Where a citation points, short: "flite.pdf p30:3-5". */
const placeOf = (name: string, loc: ResultLocator): string =>
  `${name} p${loc.page ?? "?"}:${loc.line ?? "?"}${loc.line_end !== undefined && loc.line_end !== loc.line ? `-${loc.line_end}` : ""}`;

export interface AiAnswerOutcome {
  id: string;
  set: QuestionSet;
  q: string;
  answerable: boolean;
  /** The truth's place (answerable only). */
  truth: string | null;
  answered: boolean | null;
  ms: number;
  summary: string;
  summarySource: string | null;
  citations: { n: number; place: string; inPlace: boolean; quote: string }[];
  /** Answerable: a citation at the answer's place. */
  citedInPlace: boolean | null;
  /** Answerable: share of the answer's content words in the summary. */
  contentShare: number | null;
  hit: boolean | null;
  whole: boolean | null;
  /** 1-based rank of the first result at the answer's place (within `limit`), or null. */
  rank: number | null;
}

export interface AiAnswerMiss {
  id: string;
  q: string;
  answerable: boolean;
  answered: boolean | null;
  /** The summary's first 160 characters. */
  summary: string;
  citations: string[];
  truth: string | null;
  contentShare: number | null;
  rank: number | null;
}

/** A count over a whole, with its share (null when the whole is 0). */
export interface Share {
  n: number;
  of: number;
  rate: number | null;
}
const shareOf = (n: number, of: number): Share => ({
  n,
  of,
  rate: of === 0 ? null : Math.round((n / of) * 1000) / 1000,
});

export interface AiAnswersSetFigures {
  set: QuestionSet;
  questions: number;
  answerable: number;
  unanswerable: number;
  /** Answerable questions whose summary states the answer and cites its place. */
  answer: Share;
  /** Answerable questions whose summary holds the answer sentence whole. */
  whole: Share;
  /** Citation entries at the answer's place, over answered answerable questions. */
  citationPrecision: Share;
  /** Unanswerable questions answered. */
  falseAnswered: Share;
  /** Answerable questions answered at all. */
  answeredAnswerable: Share;
  /** Answerable questions with a result at the answer's place in the first 5. */
  retrievalHitAt5: Share;
  latencyMs: { p50: number | null; p95: number | null };
  misses: AiAnswerMiss[];
}

/** A share as the report and the CLI show it: "7/10 (70%)". */
export const pct = (s: Share) => (s.rate === null ? "–" : `${s.n}/${s.of} (${Math.round(s.rate * 100)}%)`);

/** A set's shares, in the order both the report and the CLI show them. */
export const shareCells = (s: AiAnswersSetFigures) => [
  pct(s.answer),
  pct(s.whole),
  pct(s.citationPrecision),
  pct(s.answeredAnswerable),
  pct(s.falseAnswered),
  pct(s.retrievalHitAt5),
];

export interface AiAnswersResult {
  material: string;
  questionsFrom: string;
  written: string;
  limit: number;
  minContentShare: number;
  files: { name: string; passages: number | null; pages: number | null; uploaded: boolean }[];
  /** Whether the user had its fixed id (else a random one, and ranks may differ from run to run). */
  fixedUserId: boolean;
  summarySources: string[];
  vectorSources: string[];
  sets: AiAnswersSetFigures[];
  /** Every question's outcome, when asked for (options.details). */
  outcomes?: AiAnswerOutcome[];
}

interface ListedFile {
  id: string;
  original_name: string;
  status: string;
  page_count: number | null;
  passage_count: number | null;
}

/** The three manuals ready as the key's user: those there already when ready, else uploaded again. */
async function ensureFiles(
  baseUrl: string,
  key: string,
  options: AiAnswersOptions,
  log: (line: string) => void,
): Promise<{ ids: Map<string, string>; files: AiAnswersResult["files"] }> {
  const c = client(baseUrl, key);
  const res = await c.get("/api/files");
  if (res.status !== 200) throw new Error(`GET /api/files answered ${res.status}`);
  const listed = (await res.json()) as ListedFile[];
  const manuals = loadFixtures().files.filter((f) => f.kind === "pdf");
  const ids = new Map<string, string>();
  const files: AiAnswersResult["files"] = [];
  for (const f of manuals) {
    assertRunning();
    const same = listed.filter((x) => x.original_name === f.name);
    const ready = same.find((x) => x.status === "ready");
    for (const x of same.filter((y) => y !== ready)) {
      log(`ai answers: removing ${f.name} (${x.status}, ${x.id}) left from an earlier run`);
      await c.del(`/api/files/${x.id}`);
    }
    if (ready) {
      ids.set(f.name, ready.id);
      files.push({ name: f.name, passages: ready.passage_count, pages: ready.page_count, uploaded: false });
      continue;
    }
    const { id, run } = await uploadReady(
      baseUrl,
      key,
      readFileSync(join(FIXTURES, f.name)),
      f.name,
      options.readyTimeoutMs,
    );
    log(`ai answers: ${f.name} ready, ${run.passageCount} passages (${run.serverReadyMs} ms on the server)`);
    ids.set(f.name, id);
    files.push({ name: f.name, passages: run.passageCount, pages: run.pageCount, uploaded: true });
  }
  const others = listed.filter((x) => !manuals.some((f) => f.name === x.original_name));
  if (others.length > 0)
    log(
      `ai answers: the user holds other files too, which the answers may draw on: ${others.map((x) => x.original_name).join(", ")}`,
    );
  return { ids, files };
}

/**
 * The user's key: made with the CLI, and with a kept data directory, kept in it and used again
 * while the server accepts it (which saves two CLI runs per rerun).
 */
async function keyOf(dataDir: string, baseUrl: string, keep: boolean): Promise<string> {
  const path = join(dataDir, "bench-ai-answers.key");
  if (keep && existsSync(path)) {
    const kept = readFileSync(path, "utf8").trim();
    if ((await client(baseUrl, kept).get("/api/files?limit=1")).status === 200) return kept;
  }
  const { key } = await track(createUserWithKey(dataDir, { email: EMAIL, plan: "enterprise" }));
  if (keep) writeFileSync(path, `${key}\n`, { mode: 0o600 });
  return key;
}

async function inDataDir<T>(keepDir: string | null, fn: (dir: string) => Promise<T>): Promise<T> {
  if (keepDir === null) return withTempDir("locus-bench-ai-answers-", fn);
  const dir = resolve(keepDir);
  mkdirSync(dir, { recursive: true });
  return fn(dir);
}

function judge(
  question: AnswerQuestion,
  body: AiResponse,
  ms: number,
  ids: ReadonlyMap<string, string>,
  minContentShare: number,
): AiAnswerOutcome {
  const summary = body.summary ?? "";
  const fileId = question.answerable ? ids.get(question.file) : undefined;
  const at = (id: string, loc: ResultLocator) =>
    question.answerable && id === fileId && documentHit(question, loc);
  const citations = (body.citations ?? []).map((c) => ({
    n: c.n,
    place: placeOf(c.original_name, c.locator),
    inPlace: at(c.file_id, c.locator),
    quote: c.quote,
  }));
  const index = body.results.findIndex((r) => at(r.file_id, r.locator));
  const base = {
    id: question.id,
    set: question.set,
    q: question.q,
    answerable: question.answerable,
    answered: body.answered ?? null,
    ms: round(ms),
    summary,
    summarySource: body.summary_source ?? null,
    citations,
    rank: index < 0 ? null : index + 1,
  };
  if (!question.answerable)
    return {
      ...base,
      truth: null,
      citedInPlace: null,
      contentShare: null,
      hit: null,
      whole: null,
      rank: null,
    };
  const citedInPlace = citations.some((c) => c.inPlace);
  const share = contentShare(question.answer, summary);
  return {
    ...base,
    truth: placeOf(question.file, { page: question.page, line: question.line, line_end: question.lineEnd }),
    citedInPlace,
    contentShare: Math.round(share * 100) / 100,
    hit: citedInPlace && share >= minContentShare,
    whole: holdsWhole(question.answer, summary),
  };
}

function figures(set: QuestionSet, outcomes: readonly AiAnswerOutcome[]): AiAnswersSetFigures {
  const mine = outcomes.filter((o) => o.set === set);
  const answerable = mine.filter((o) => o.answerable);
  const unanswerable = mine.filter((o) => !o.answerable);
  const answered = answerable.filter((o) => o.answered === true);
  const entries = answered.flatMap((o) => o.citations);
  const ms = mine.map((o) => o.ms).sort((a, b) => a - b);
  const missed = mine.filter((o) => (o.answerable ? o.hit !== true : o.answered === true));
  return {
    set,
    questions: mine.length,
    answerable: answerable.length,
    unanswerable: unanswerable.length,
    answer: shareOf(answerable.filter((o) => o.hit).length, answerable.length),
    whole: shareOf(answerable.filter((o) => o.whole).length, answerable.length),
    citationPrecision: shareOf(entries.filter((c) => c.inPlace).length, entries.length),
    falseAnswered: shareOf(unanswerable.filter((o) => o.answered === true).length, unanswerable.length),
    answeredAnswerable: shareOf(answered.length, answerable.length),
    retrievalHitAt5: shareOf(
      answerable.filter((o) => o.rank !== null && o.rank <= 5).length,
      answerable.length,
    ),
    latencyMs: {
      p50: ms.length === 0 ? null : round(quantile(ms, 0.5)),
      p95: ms.length === 0 ? null : round(quantile(ms, 0.95)),
    },
    misses: missed.map((o) => ({
      id: o.id,
      q: o.q,
      answerable: o.answerable,
      answered: o.answered,
      summary: o.summary.slice(0, 160),
      citations: o.citations.map((c) => `[${c.n}] ${c.place}${c.inPlace ? " (in place)" : ""}`),
      truth: o.truth,
      contentShare: o.contentShare,
      rank: o.rank,
    })),
  };
}

export async function benchAiAnswers(
  options: AiAnswersOptions,
  log: (line: string) => void,
): Promise<AiAnswersResult> {
  const { from, written, questions: all } = loadQuestions();
  const questions = all.filter((q) => options.sets.includes(q.set));
  return inDataDir(options.keepDir, async (dataDir) => {
    const fixedUserId = await track(
      createUsersWithIds(dataDir, [{ email: EMAIL, id: USER_ID }], (err) =>
        log(`ai answers: could not fix the user's id (${String(err)}); results depend on a random id`),
      ),
    );
    return withServer(dataDir, { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" }, async (server) => {
      const key = await keyOf(dataDir, server.baseUrl, options.keepDir !== null);
      const { ids, files } = await ensureFiles(server.baseUrl, key, options, log);
      log(`ai answers: ${questions.length} questions (${from.split(" ")[0]}), ai mode, one at a time ...`);
      // Not measured: the first ai search loads the user's vectors into memory.
      await searchJson<AiResponse>(server.baseUrl, key, "warm-up question", "ai", options.limit);
      const outcomes: AiAnswerOutcome[] = [];
      const summarySources = new Set<string>();
      const vectorSources = new Set<string>();
      for (const question of questions) {
        assertRunning();
        const { body, ms } = await searchJson<AiResponse>(
          server.baseUrl,
          key,
          question.q,
          "ai",
          options.limit,
        );
        if (body.summary_source) summarySources.add(body.summary_source);
        if (body.vector_source) vectorSources.add(body.vector_source);
        outcomes.push(judge(question, body, ms, ids, options.minContentShare));
      }
      const sets = (["test", "dev"] as const)
        .filter((s) => options.sets.includes(s))
        .map((s) => figures(s, outcomes));
      for (const s of sets)
        log(
          `ai answers, ${s.set}: answer ${s.answer.n}/${s.answer.of}, whole ${s.whole.n}/${s.whole.of}, ` +
            `false answered ${s.falseAnswered.n}/${s.falseAnswered.of}, retrieval hit@5 ${s.retrievalHitAt5.n}/${s.retrievalHitAt5.of}`,
        );
      return {
        material:
          "Real Debian manuals (fontconfig-user.pdf, libtasn1.pdf, flite.pdf: bench/fixtures/quality/README.md) and hand-written questions, " +
          "each with the sentence that answers it and its lines (pdftotext -layout), plus questions the manuals do not answer",
        questionsFrom: from,
        written,
        limit: options.limit,
        minContentShare: options.minContentShare,
        files,
        fixedUserId,
        summarySources: [...summarySources],
        vectorSources: [...vectorSources],
        sets,
        ...(options.details ? { outcomes } : {}),
      };
    });
  });
}

/** The CLI's table and misses. */
export function describe(r: AiAnswersResult): string[] {
  const head = [
    "set",
    "answer",
    "whole",
    "cite prec.",
    "answered (ans.)",
    "false ans.",
    "hit@5",
    "p50 ms",
    "p95 ms",
  ];
  const rows = r.sets.map((s) => [
    `${s.set} (${s.answerable}+${s.unanswerable})`,
    ...shareCells(s),
    String(s.latencyMs.p50 ?? "–"),
    String(s.latencyMs.p95 ?? "–"),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  const out = [
    `questions: ${r.questionsFrom}`,
    `summary: ${r.summarySources.join(", ") || "–"}; vectors: ${r.vectorSources.join(", ") || "–"}; limit ${r.limit}`,
    "",
    line(head),
    ...rows.map(line),
  ];
  for (const s of r.sets) {
    if (s.misses.length === 0) continue;
    out.push("", `${s.set}: ${s.misses.length} misses`);
    for (const m of s.misses) {
      out.push(
        `- ${m.id}: "${m.q}"`,
        m.answerable
          ? `    answered ${m.answered}, truth ${m.truth}, words ${m.contentShare === null ? "–" : `${Math.round(m.contentShare * 100)}%`}, retrieval rank ${m.rank ?? "–"}`
          : `    unanswerable, answered ${m.answered}`,
        `    summary: ${JSON.stringify(m.summary)}`,
        `    cites: ${m.citations.join("; ") || "nothing"}`,
      );
    }
  }
  return out;
}

const USAGE = `Usage: node --import tsx bench/ai/ai-answers.ts [options]
  --set dev|test|all   which questions to ask (default all)
  --keep DIR           keep the server's data directory in DIR: a rerun reuses the three manuals
                       when they are ready there (the server restarts from source every run; the
                       files keep the passages and vectors they were indexed with: remove DIR when
                       extraction, the embedder or the index's format change)
  --out FILE           write the whole result, every question's summary and citations, as JSON
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== "--"),
    options: {
      set: { type: "string" },
      keep: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const set = values.set ?? "all";
  if (set !== "dev" && set !== "test" && set !== "all") {
    process.stderr.write(`--set must be dev, test or all, got "${set}"\n${USAGE}`);
    process.exit(2);
  }
  const stop = (reason: string, code: number) => void shutDown(reason).finally(() => process.exit(code));
  process.on("SIGINT", () => stop("interrupted", 130));
  process.on("SIGTERM", () => stop("terminated", 143));
  const started = performance.now();
  const log = (line: string) =>
    console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  const result = await benchAiAnswers(
    {
      ...DEFAULT_AI_ANSWERS_OPTIONS,
      sets: set === "all" ? ["dev", "test"] : [set],
      keepDir: values.keep ?? null,
      details: true,
    },
    log,
  );
  console.log("");
  for (const line of describe(result)) console.log(line);
  if (values.out) {
    writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`\nWritten: ${values.out}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href)
  await main();
