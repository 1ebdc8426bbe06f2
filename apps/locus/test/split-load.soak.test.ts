import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import pg from "pg";
import {
  client,
  createUserWithKey,
  fileRecordThrough,
  postgresCluster,
  redisServer,
  recordResilience,
  settleFiles,
  startSplitStack,
  TEST_DATABASE_URL,
  tokenPdf,
  type Client,
  type SplitStack,
} from "@locus/testing";

/**
 * Load in the split shape (two gateways, every service its own process, real PostgreSQL, RabbitMQ,
 * Redis and an S3 server): a bounded soak of mixed uploads and searches with the memory of every
 * process sampled; rate limits counted across both gateways; then, under the same load, each
 * service killed with SIGKILL in turn and RabbitMQ and PostgreSQL restarted. Every accepted file
 * must end ready or failed, none lost, none indexed twice; recovery times are measured. Figures go
 * to test-artifacts/resilience/split-load.json (see `pnpm test:resilience`).
 *
 * A soak suite: about eight minutes of a loaded machine, too long for every CI run
 * (`pnpm test:resilience` runs it). The crashes the outbox and the stall sweep are for are held in
 * every run by split-outbox.faults.test.ts. The soak lasts LOCUS_SOAK_SECONDS: 45 s by default;
 * `pnpm test:resilience` soaks for 120 s, long enough for the memory comparison to see a slow leak.
 */
const run = promisify(execFile);
const SOAK_SECONDS = Number(process.env.LOCUS_SOAK_SECONDS ?? 45);
const FREE_LIMIT = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => Math.round(ms / 100) / 10;

let stack: SplitStack;
let gateways: Client[];
let proKey: string;
const report: Record<string, unknown> = {};

beforeAll(async () => {
  stack = await startSplitStack({
    gateways: 2,
    env: {
      LOCUS_RATE_LIMIT_PRO: "1000",
      LOCUS_RATE_LIMIT_FREE: String(FREE_LIMIT),
      LOCUS_MAX_ATTEMPTS: "5",
      // The stall sweep at 20 s instead of ten minutes, as in split-outbox.faults: the last resort
      // for what the faults leave, within the suite's waits.
      LOCUS_STALLED_AFTER_S: "20",
    },
  });
  proKey = (await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv })).key;
  gateways = stack.gatewayUrls.map((url) => client(url, proKey));
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  recordResilience("split-load", { measured_at: new Date().toISOString(), ...report });
});

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
};
const median = (values: number[]) => percentile(values, 50) ?? 0;

/**
 * Mixed traffic, as clients would send it: an upload every `uploadEveryMs` and a stream of
 * searches, alternating between the gateways. An upload refused by a fault (a connection reset,
 * a 5xx) is retried, as a client would, until it is accepted; what the server accepted is kept for
 * the accounting.
 */
class Load {
  readonly accepted = new Map<string, string>(); // file id -> its token
  readonly latencies = { upload: [] as number[], search: [] as number[] };
  readonly errors = { upload: 0, search: 0 };
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private next = 0;

  constructor(
    readonly tag: string,
    private readonly uploadEveryMs: number,
  ) {}

  start(): this {
    this.loops.push(this.uploads(), this.searches(), this.searches());
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private gateway(): Client {
    return gateways[this.next++ % gateways.length]!;
  }

  private async uploads(): Promise<void> {
    for (let n = 0; !this.stopped; n++) {
      const token = `${this.tag}${n}q`;
      const pdf = await tokenPdf(token);
      const started = Date.now();
      for (let attempt = 0; !this.stopped || attempt === 0; attempt++) {
        const t0 = performance.now();
        const res = await this.gateway()
          .upload(pdf, `${token}.pdf`)
          .catch(() => null);
        if (res?.status === 200) {
          this.latencies.upload.push(performance.now() - t0);
          this.accepted.set(((await res.json()) as { file: { id: string } }).file.id, token);
          break;
        }
        await res?.body?.cancel();
        this.errors.upload++;
        await sleep(250);
      }
      await sleep(Math.max(0, this.uploadEveryMs - (Date.now() - started)));
    }
  }

  private async searches(): Promise<void> {
    while (!this.stopped) {
      const tokens = [...this.accepted.values()];
      const q =
        tokens.length > 0 && Math.random() < 0.5
          ? tokens[Math.floor(Math.random() * tokens.length)]!
          : "tide harbours";
      const t0 = performance.now();
      const res = await this.gateway()
        .get(`/api/search?q=${encodeURIComponent(q)}&limit=10`)
        .catch(() => null);
      if (res?.status === 200) this.latencies.search.push(performance.now() - t0);
      else this.errors.search++;
      await res?.body?.cancel();
      await sleep(100);
    }
  }
}

const fileRecord = (id: string) => fileRecordThrough(gateways, id);
const settle = (ids: string[], timeoutMs: number) => settleFiles(gateways, ids, timeoutMs);

/**
 * The accounting of a run: files lost (accepted, then missing or never finished), files indexed
 * twice (more passages stored than the file reports, or its word found more than once), files
 * failed, and files that exist though their upload was answered with an error.
 */
async function account(load: Load): Promise<Record<string, number>> {
  const final = await settle([...load.accepted.keys()], 180_000);
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  const stored = new Map(
    (
      await db.query<{ file_id: string; n: string }>(
        `SELECT file_id, count(*) AS n FROM "${stack.schema}".passages GROUP BY file_id`,
      )
    ).rows.map((r) => [r.file_id, Number(r.n)]),
  );
  const tokens = await db.query<{ id: string; original_name: string }>(
    `SELECT id, original_name FROM "${stack.schema}".files WHERE original_name LIKE $1`,
    [`${load.tag}%`],
  );
  await db.end();

  let lost = 0;
  let duplicates = 0;
  let failed = 0;
  for (const [id, token] of load.accepted) {
    const record = final.get(id);
    if (!record || (record.status !== "ready" && record.status !== "failed")) {
      lost++;
      continue;
    }
    if (record.status === "failed") {
      failed++;
      expect(record.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      continue;
    }
    const search = (await (await gateways[0]!.get(`/api/search?q=${token}&limit=100`)).json()) as {
      results: { file_id: string }[];
    };
    const hits = search.results.filter((r) => r.file_id === id).length;
    if ((stored.get(id) ?? 0) !== record.passage_count || hits !== 1) duplicates++;
  }
  // Uploads whose answer was lost to a fault but whose file was stored: a client would see it in
  // its list. Each must still finish like any other.
  const orphans = tokens.rows.filter((r) => !load.accepted.has(r.id)).map((r) => r.id);
  const orphanFinal = await settle(orphans, 120_000);
  const orphansUnfinished = [...orphanFinal.values()].filter(
    (r) => r !== null && r.status !== "ready" && r.status !== "failed",
  ).length;
  return {
    files_accepted: load.accepted.size,
    files_lost: lost,
    files_indexed_twice: duplicates,
    files_failed: failed,
    uploads_refused_during_faults: load.errors.upload,
    orphan_files: orphans.length,
    orphan_files_unfinished: orphansUnfinished,
  };
}

const scratchFolders = () =>
  readdirSync(tmpdir()).filter((n) => n.startsWith("locus-recording-") || n.startsWith("locus-speech-"));

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
};

it(
  `soaks for ${SOAK_SECONDS} s of mixed uploads and searches: memory flat in every process, every file finished, nothing left behind`,
  async () => {
    const services = Object.keys(stack.serviceUrls);
    const samples = new Map<string, number[]>(services.map((s) => [s, []]));
    const scratchBefore = new Set(scratchFolders());
    const load = new Load("soak", 500).start();
    const started = Date.now();
    while (Date.now() - started < SOAK_SECONDS * 1000) {
      for (const s of services) samples.get(s)!.push(rssMb(stack.pidOf(s)));
      await sleep(2000);
    }
    await load.stop();
    const accounting = await account(load);

    // Flat: the last quarter of the soak against its second quarter (the first is warm-up: caches,
    // word vectors, JIT). A leak of a megabyte a second shows as 30+ MB a quarter of two minutes.
    const memory: Record<string, { warm_mb: number; end_mb: number; peak_mb: number }> = {};
    for (const [service, mb] of samples) {
      const q = Math.floor(mb.length / 4);
      const warm = median(mb.slice(q, 2 * q));
      const end = median(mb.slice(3 * q));
      memory[service] = {
        warm_mb: Math.round(warm),
        end_mb: Math.round(end),
        peak_mb: Math.round(Math.max(...mb)),
      };
    }

    // Nothing left behind: the bucket holds each file's upload and, once read, its extraction (kept
    // for `index rebuild`), and nothing else.
    const keys = new Set(await stack.bucketKeys());
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    const files = (
      await db.query<{ id: string; user_id: string; blob_key: string; status: string }>(
        `SELECT id, user_id, blob_key, status FROM "${stack.schema}".files`,
      )
    ).rows;
    await db.end();
    const expectedKeys = new Set(
      files.flatMap((f) => [
        f.blob_key,
        ...(f.status === "ready" ? [`extractions/${f.user_id}/${f.id}.jsonl`] : []),
      ]),
    );
    const strays = [...keys].filter((k) => !expectedKeys.has(k));
    const missing = [...expectedKeys].filter((k) => !keys.has(k));
    // Scratch folders of the workers (recordings, speech) live in the system's temporary folder.
    const scratch = scratchFolders().filter((n) => !scratchBefore.has(n));

    report.soak = {
      seconds: SOAK_SECONDS,
      uploads: load.latencies.upload.length,
      searches: load.latencies.search.length,
      upload_ms: { p50: percentile(load.latencies.upload, 50), p95: percentile(load.latencies.upload, 95) },
      search_ms: { p50: percentile(load.latencies.search, 50), p95: percentile(load.latencies.search, 95) },
      errors: load.errors,
      memory_mb: memory,
      bucket_objects: keys.size,
      bucket_objects_stray: strays.length,
      bucket_objects_missing: missing.length,
      ...accounting,
    };

    expect(load.errors).toEqual({ upload: 0, search: 0 });
    expect(accounting).toMatchObject({
      files_lost: 0,
      files_indexed_twice: 0,
      files_failed: 0,
      orphan_files: 0,
    });
    expect({ strays, missing }).toEqual({ strays: [], missing: [] });
    expect(scratch).toEqual([]);
    // Quarters of two samples or more, every one a reading: a soak too short to sample, or a
    // process whose memory could not be read, proves nothing about memory and fails here.
    for (const [service, mb] of samples) {
      const unread = mb.filter((x) => !(x > 0)).length;
      expect(
        mb.length >= 8 && unread === 0 ? "sampled" : `${service}: ${mb.length} samples, ${unread} unread`,
      ).toBe("sampled");
    }
    for (const [service, m] of Object.entries(memory)) {
      expect({ service, grew: m.end_mb > Math.max(m.warm_mb * 1.25, m.warm_mb + 48) }).toEqual({
        service,
        grew: false,
      });
    }
  },
  (SOAK_SECONDS + 300) * 1000,
);

it("holds an account to its rate limit within 10% across two gateways", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "free", env: stack.cliEnv });
  const clients = stack.gatewayUrls.map((url) => client(url, key));
  const counts = { accepted: 0, limited: 0 };
  const DURATION_MS = 15_000;
  const started = performance.now();
  let ended = started;
  // Eight callers, alternating gateways, each as fast as answers come: far above the limit.
  await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      for (let n = i; performance.now() - started < DURATION_MS; n++) {
        const res = await clients[n % clients.length]!.get("/api/files?limit=1");
        await res.body?.cancel();
        if (res.status === 429) counts.limited++;
        else if (res.status === 200) counts.accepted++;
        else throw new Error(`unexpected ${res.status}`);
        ended = Math.max(ended, performance.now());
      }
    }),
  );
  const expected = FREE_LIMIT * ((ended - started) / 1000);
  const ratio = counts.accepted / expected;
  report.rate_limit = {
    gateways: clients.length,
    limit_per_s: FREE_LIMIT,
    seconds: seconds(ended - started),
    accepted: counts.accepted,
    refused: counts.limited,
    expected: Math.round(expected),
    accepted_over_expected: Math.round(ratio * 1000) / 1000,
  };
  expect(counts.limited).toBeGreaterThan(counts.accepted);
  expect(ratio).toBeGreaterThanOrEqual(0.9);
  expect(ratio).toBeLessThanOrEqual(1.1);
}, 60_000);

it("loses, duplicates and fails nothing while each service is killed in turn, RabbitMQ and PostgreSQL restart and Redis is away, under load", async () => {
  const load = new Load("fault", 400).start();
  await sleep(3000);
  const recoveries: Record<string, unknown>[] = [];
  let probes = 0;

  /** Uploads a probe file through any gateway that answers and waits until it is ready. */
  const probeReady = async (t0: number) => {
    const pdf = await tokenPdf(`probe${probes++}p`);
    let id: string | undefined;
    for (let i = 0; !id; i++) {
      const res = await gateways[i % gateways.length]!.upload(pdf, "probe.pdf").catch(() => null);
      if (res?.status === 200) id = ((await res.json()) as { file: { id: string } }).file.id;
      else {
        await res?.body?.cancel();
        await sleep(200);
      }
    }
    for (;;) {
      const { body } = await fileRecord(id);
      if (body?.status === "ready") return seconds(Date.now() - t0);
      if (body?.status === "failed") throw new Error(`probe failed: ${JSON.stringify(body.error)}`);
      await sleep(100);
    }
  };
  const healthy = async (url: string, t0: number) => {
    for (;;) {
      const ok = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return seconds(Date.now() - t0);
      await sleep(50);
    }
  };

  for (const service of Object.keys(stack.serviceUrls)) {
    const before = stack.pidOf(service);
    const t0 = Date.now();
    stack.killService(service);
    // The launcher (standing in for Kubernetes) starts it again after a second.
    while (stack.pidOf(service) === before) await sleep(50);
    const back = await healthy(stack.serviceUrls[service]!, t0);
    recoveries.push({ fault: `kill -9 ${service}`, back_s: back, probe_file_ready_s: await probeReady(t0) });
    await sleep(1000);
  }

  {
    const t0 = Date.now();
    await run("rabbitmqctl", ["stop_app"]);
    try {
      await sleep(3000);
    } finally {
      await run("rabbitmqctl", ["start_app"]);
    }
    const restarted = Date.now();
    recoveries.push({
      fault: "RabbitMQ stopped 3 s and started",
      outage_s: seconds(restarted - t0),
      probe_file_ready_s: await probeReady(restarted),
    });
  }
  {
    const t0 = Date.now();
    await postgresCluster("stop");
    let readyWhileDown: { gateways: number[]; files: number } | undefined;
    try {
      await sleep(3000);
      // The gateways stay in service (each request gets its own 503 meanwhile): a database blip
      // must not empty the public Service. The files service, which cannot work without it, leaves.
      readyWhileDown = {
        gateways: await Promise.all(stack.gatewayUrls.map(async (u) => (await fetch(`${u}/readyz`)).status)),
        files: (await fetch(`${stack.serviceUrls.files!}/readyz`)).status,
      };
    } finally {
      await postgresCluster("start");
    }
    const restarted = Date.now();
    recoveries.push({
      fault: "PostgreSQL stopped 3 s and started",
      outage_s: seconds(restarted - t0),
      probe_file_ready_s: await probeReady(restarted),
    });
    expect(readyWhileDown).toEqual({ gateways: stack.gatewayUrls.map(() => 200), files: 503 });
  }
  {
    // Redis holds only counters: while it is away each gateway counts rate limits and sign-ins in
    // its own memory, the API goes on, and /readyz stays ready (it says "degraded" internally).
    const t0 = Date.now();
    await redisServer("stop");
    let readyz: number[] = [];
    let probe: number;
    try {
      await sleep(1000);
      readyz = await Promise.all(stack.gatewayUrls.map(async (u) => (await fetch(`${u}/readyz`)).status));
      probe = await probeReady(Date.now());
      await sleep(1000);
    } finally {
      await redisServer("start");
    }
    recoveries.push({
      fault: "Redis stopped and started (a file uploaded and made ready while it was away)",
      outage_s: seconds(Date.now() - t0),
      probe_file_ready_s: probe,
    });
    expect({ fault: "Redis away", readyz }).toEqual({ fault: "Redis away", readyz: gateways.map(() => 200) });
  }
  await sleep(3000);
  await load.stop();
  const accounting = await account(load);
  report.faults = {
    faults_injected: recoveries.length,
    recoveries,
    uploads: load.latencies.upload.length,
    searches: load.latencies.search.length,
    search_errors_during_faults: load.errors.search,
    ...accounting,
  };
  // Every file is a good PDF: one that failed did so because of a fault, which must not happen.
  expect(accounting).toMatchObject({
    files_lost: 0,
    files_indexed_twice: 0,
    files_failed: 0,
    orphan_files_unfinished: 0,
  });
  // Recovery is a restart (about 5 s here: a second's wait, then the process starting); half a
  // minute means something held it back.
  for (const r of recoveries) {
    expect({ fault: r.fault, slow: Number(r.back_s ?? 0) > 30 || Number(r.probe_file_ready_s) > 30 }).toEqual(
      {
        fault: r.fault,
        slow: false,
      },
    );
  }
  expect(load.accepted.size).toBeGreaterThan(20);
}, 600_000);

/**
 * What a files service killed between storing an upload and announcing it leaves: the PDF's bytes
 * in the bucket and its record `pending`, of the same account as an upload made now (their owner),
 * with `within` (in the record's transaction) anything else that crash would leave. Returns the
 * file's id and when it was stored.
 */
