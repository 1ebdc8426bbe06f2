/**
 * `pnpm bench:hop`: what the split shape's hop costs a search on a small collection of real files
 * (#39: a fixed cost per request dominates there, where #18 measured 1.45× at 100k passages).
 *
 * The same real files (bench/fixtures: the quality set's three Debian manuals and their three page
 * images, and the documents set's office files) are loaded, through the API, into three Locus
 * deployments running side by side on this machine:
 * - all-in-one, embedded: `pnpm start` (SQLite, the in-process bus, local disk), the issue's baseline;
 * - all-in-one on the shared parts: one process, on PostgreSQL, RabbitMQ, Redis and S3, as the
 *   split shape's processes are: what its adapters cost without its hop;
 * - split: `pnpm start:split` (a gateway, then the search service over HTTP).
 * Then rounds of the fixtures' keyword queries (quick) and questions (ai), one request in flight,
 * each query sent to the three in turn so that a busy moment weighs on all alike. Latency is the
 * client's (fetch to the whole body read); for the split shape the gateway's and the search
 * service's own figures for the same requests (their "request" log lines, by request id) split it
 * into the search itself, the gateway's own work (key check, rate limit, the hop) and the rest.
 * "gateway alone" is a test key's search, answered from the gateway's sandbox after the key check
 * and the rate limit: the floor of any request through the gateway.
 *
 * Needs PostgreSQL, RabbitMQ and Redis as `.ci/services.sh` leaves them. Options: --rounds N
 * (default 5). Writes bench/split/hop.json and bench/split/hop.md. Real files, so these figures
 * are about a small real collection; the queries were written for the quality benchmarks, not here.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { format } from "prettier";
import {
  client,
  createUserWithKey,
  REPO_ROOT,
  removeDataDir,
  startAllInOneOnSharedParts,
  startLocus,
  startSplitStack,
  uploadAndWait,
  waitForMeaning,
  type Client,
  type LocusProcess,
} from "@locus/testing";
import { serverTimings } from "../harness/harness.ts";
import { median, quantile, round } from "../harness/stats.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const ROUNDS = Number(values.rounds);

const QUALITY = join(REPO_ROOT, "bench/fixtures/quality");
const DOCUMENTS = join(REPO_ROOT, "bench/fixtures/documents");
interface QualityQueries {
  files: { name: string; kind: string }[];
  documentQueries: { q: string }[];
  aiQuestions: { q: string }[];
}
interface DocumentQueries {
  files: { name: string; path: string }[];
  queries: { q: string }[];
}
const quality = JSON.parse(readFileSync(join(QUALITY, "queries.json"), "utf8")) as QualityQueries;
const documents = JSON.parse(readFileSync(join(DOCUMENTS, "queries.json"), "utf8")) as DocumentQueries;
/** The files: manuals and their page images (not the recordings, whose reading is minutes), office files. */
const FILES = [
  ...quality.files.filter((f) => f.kind !== "audio").map((f) => join(QUALITY, f.name)),
  ...documents.files.map((f) => join(REPO_ROOT, f.path)),
];
const QUICK = [...quality.documentQueries, ...documents.queries].map((q) => q.q);
const AI = quality.aiQuestions.map((q) => q.q);

interface Deployment {
  name: string;
  locus: LocusProcess;
  live: Client;
  test: Client;
  /** The services whose request lines split a request's time (split only). */
  services?: { gateway: string; search: string };
}

async function deploy(name: string, locus: LocusProcess): Promise<Deployment> {
  const env = locus.cliEnv;
  const live = client(
    locus.baseUrl,
    (await createUserWithKey(locus.dataDir, { plan: "enterprise", env })).key,
  );
  const testKey = (await createUserWithKey(locus.dataDir, { plan: "enterprise", type: "test", env })).key;
  return { name, locus, live, test: client(locus.baseUrl, testKey) };
}

/** Uploads every file and waits for it to be ready and its passages to have their vectors. */
async function load(d: Deployment): Promise<{ files: number; passages: number; seconds: number }> {
  const started = performance.now();
  let passages = 0;
  for (const path of FILES) {
    const record = await uploadAndWait(d.live, readFileSync(path), path.split("/").pop()!, 600_000);
    if (record.status !== "ready") throw new Error(`${d.name}: ${path} ended ${record.status}`);
    await waitForMeaning(d.live, record.id, 600_000);
    passages += record.passage_count ?? 0;
  }
  return { files: FILES.length, passages, seconds: round((performance.now() - started) / 1000) };
}

let sequence = 0;
/** One search, timed by the client; returns its time and the request id it was sent with. */
async function search(c: Client, q: string, mode: "quick" | "ai"): Promise<{ ms: number; id: string }> {
  const id = `hop-${process.pid}-${sequence++}`;
  const started = performance.now();
  const res = await c.get(`/api/search?q=${encodeURIComponent(q)}&mode=${mode}&limit=10`, {
    "X-Request-Id": id,
  });
  await res.arrayBuffer();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`search answered ${res.status}`);
  return { ms, id };
}

interface Latency {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}
function latency(values: number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return {
    n: values.length,
    p50: round(median(sorted)),
    p95: round(quantile(sorted, 0.95)),
    mean: round(mean),
  };
}

const deployments: Deployment[] = [];
try {
  const started = await Promise.all([
    startLocus({ env: { LOCUS_LOG_LEVEL: "info" }, timeoutMs: 150_000 }),
    startAllInOneOnSharedParts({ env: { LOCUS_LOG_LEVEL: "info" } }),
    startSplitStack(),
  ]);
  const names = ["all-in-one", "all-in-one, shared parts", "split"];
  for (const [i, locus] of started.entries()) deployments.push(await deploy(names[i]!, locus));
  deployments[2]!.services = { gateway: "gateway", search: "search" };

  const loaded = [];
  for (const d of deployments) loaded.push({ name: d.name, ...(await load(d)) });
  console.error(`loaded: ${JSON.stringify(loaded)}`);

  // Warm-up, not measured: every query once in each mode (caches, postings, JIT, connections).
  for (const d of deployments) {
    for (const q of QUICK) await search(d.live, q, "quick");
    for (const q of AI) await search(d.live, q, "ai");
  }
  const times = new Map<
    string,
    { quick: number[]; ai: number[]; alone: number[]; ids: Map<string, string[]> }
  >(
    deployments.map((d) => [
      d.name,
      {
        quick: [],
        ai: [],
        alone: [],
        ids: new Map([
          ["quick", []],
          ["ai", []],
        ]),
      },
    ]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const [mode, queries] of [
      ["quick", QUICK],
      ["ai", AI],
    ] as const) {
      for (const q of queries) {
        for (const d of deployments) {
          const { ms, id } = await search(d.live, q, mode);
          const t = times.get(d.name)!;
          t[mode].push(ms);
          t.ids.get(mode)!.push(id);
        }
      }
    }
    for (const q of QUICK.slice(0, 40)) {
      for (const d of deployments) times.get(d.name)!.alone.push((await search(d.test, q, "quick")).ms);
    }
  }

  const rows = deployments.map((d) => {
    const t = times.get(d.name)!;
    const split = d.services
      ? Object.fromEntries(
          (["quick", "ai"] as const).map((mode) => {
            const gateway = serverTimings(d.locus.logs, d.services!.gateway);
            const searchService = serverTimings(d.locus.logs, d.services!.search);
            const ids = t.ids.get(mode)!;
            const pick = (m: Map<string, number>) => ids.flatMap((id) => (m.has(id) ? [m.get(id)!] : []));
            return [mode, { gateway: latency(pick(gateway)), search_service: latency(pick(searchService)) }];
          }),
        )
      : undefined;
    return {
      deployment: d.name,
      quick: latency(t.quick),
      ai: latency(t.ai),
      gateway_alone: latency(t.alone),
      ...(split ? { server_side: split } : {}),
    };
  });
  const baseline = rows[0]!;
  const target = (mode: "quick" | "ai") => round(2 * baseline[mode].p50 + 2);
  const report = {
    measured_at: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memory_gib: round(totalmem() / 2 ** 30) },
    rounds: ROUNDS,
    queries: { quick: QUICK.length, ai: AI.length },
    loaded,
    rows,
    goal: {
      quick: {
        target_ms: target("quick"),
        split_p50_ms: rows[2]!.quick.p50,
        met: rows[2]!.quick.p50 <= target("quick"),
      },
      ai: { target_ms: target("ai"), split_p50_ms: rows[2]!.ai.p50, met: rows[2]!.ai.p50 <= target("ai") },
    },
  };
  writeFileSync(join(REPO_ROOT, "bench/split/hop.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    join(REPO_ROOT, "bench/split/hop.md"),
    await format(markdown(report), { parser: "markdown" }),
  );
  console.log(markdown(report));
} finally {
  for (const d of deployments) {
    await d.locus.stop();
    removeDataDir(d.locus.dataDir);
  }
}

function markdown(r: {
  measured_at: string;
  machine: { cpus: number; cpu: string | undefined; memory_gib: number };
  rounds: number;
  queries: { quick: number; ai: number };
  loaded: { name: string; files: number; passages: number; seconds: number }[];
  rows: {
    deployment: string;
    quick: Latency;
    ai: Latency;
    gateway_alone: Latency;
    server_side?: Record<string, { gateway: Latency; search_service: Latency }>;
  }[];
  goal: Record<"quick" | "ai", { target_ms: number; split_p50_ms: number; met: boolean }>;
}): string {
  const lines = [
    "# The split hop on a small real collection (`pnpm bench:hop`)",
    "",
    `Measured ${r.measured_at} on ${r.machine.cpus} × ${r.machine.cpu ?? "?"}, ${r.machine.memory_gib} GiB, by bench/split/hop.ts (what it does and why is at its top). Real files: ${r.loaded[0]?.files} of bench/fixtures (${r.loaded.map((l) => `${l.passages} passages in ${l.name}`).join(", ")}); ${r.queries.quick} keyword queries and ${r.queries.ai} questions written for the quality benchmarks, ${r.rounds} rounds, one request in flight, client-side milliseconds.`,
    "",
    "| deployment | quick p50 | quick p95 | ai p50 | ai p95 | gateway alone p50 |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...r.rows.map(
      (row) =>
        `| ${row.deployment} | ${row.quick.p50} | ${row.quick.p95} | ${row.ai.p50} | ${row.ai.p95} | ${row.gateway_alone.p50} |`,
    ),
    "",
    `Goal (#39): split p50 at most twice the embedded all-in-one's plus 2 ms. Quick: ${r.goal.quick.split_p50_ms} ms against ${r.goal.quick.target_ms} ms (${r.goal.quick.met ? "met" : "not met"}); ai: ${r.goal.ai.split_p50_ms} ms against ${r.goal.ai.target_ms} ms (${r.goal.ai.met ? "met" : "not met"}).`,
  ];
  const split = r.rows.find((row) => row.server_side);
  if (split?.server_side) {
    lines.push(
      "",
      "The split shape's requests as its processes logged them (p50, ms): the search service's own time, the gateway's (which holds the search service's), and the client's.",
      "",
      "| mode | search service | gateway | client |",
      "| --- | ---: | ---: | ---: |",
      ...(["quick", "ai"] as const).map(
        (mode) =>
          `| ${mode} | ${split.server_side![mode]!.search_service.p50} | ${split.server_side![mode]!.gateway.p50} | ${split[mode].p50} |`,
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}
