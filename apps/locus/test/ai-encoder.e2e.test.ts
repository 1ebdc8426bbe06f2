import {
  client,
  createUserWithKey,
  makePdf,
  metricValue,
  PARAPHRASES_DEV,
  removeDataDir,
  runCli,
  scrapeMetrics,
  startLocus,
  startSplitStack,
  tempDataDir,
  uploadAndWait,
  waitForMeaning,
  type Client,
  type LocusProcess,
} from "@locus/testing";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_MODELS_DIR, SENTENCE_MODEL } from "@locus/embedder";
import { schemaErrors } from "./openapi-validator.ts";

/**
 * ai mode on the real sentence encoder (LOCUS_EMBEDDER=encoder, the model `pnpm install` fetched):
 * the file is ready once its passages are searchable by keyword, the meaning stage (the encoder
 * group) then gives them vectors, and a question in other words finds its page; and without the
 * model files Locus still starts and answers, on the word vectors, saying it is degraded in
 * /readyz, on the dashboard and in every ai response; without the summary's answer judge alone,
 * it keeps the encoder and says so in /readyz.
 */
interface AiBody {
  results: { content: string; locator: { page?: number } }[];
  vector_source: string;
  fallbacks?: { component: string; engine: string; used: string; reason: string }[];
}

/** Ten statements, one a page, on ten unrelated subjects (no question shares a word with its statement). */
const PAIRS = PARAPHRASES_DEV.slice(0, 10);

async function askAi(c: Client, q: string): Promise<AiBody> {
  const res = await c.get(`/api/search?q=${encodeURIComponent(q)}&mode=ai&limit=5`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as AiBody;
  expect(schemaErrors("SearchResponse", body)).toBeNull();
  return body;
}

/** The internal port's address (LOCUS_METRICS_PORT), from the line the server logs at start. */
function internalUrl(locus: LocusProcess): string {
  const url = /"metricsUrl":"([^"]+)\/metrics"/.exec(locus.logs.join("\n"))?.[1];
  expect(url).toBeDefined();
  return url!;
}

async function internalReadyz(
  locus: LocusProcess,
): Promise<{ status: string; checks: Record<string, string> }> {
  return (await (await fetch(`${internalUrl(locus)}/readyz`)).json()) as {
    status: string;
    checks: Record<string, string>;
  };
}

/**
 * Uploads the ten statements as a PDF, one a page, and waits until the meaning stage has encoded
 * it: ready for keyword search first, its record then says when its passages have their vectors.
 */
async function uploadStatementsEncoded(c: Client): Promise<void> {
  const file = await uploadAndWait(
    c,
    await makePdf({ pages: PAIRS.map((p) => [p.statement]) }),
    "notes.pdf",
    60_000,
  );
  expect(file.status).toBe("ready");
  expect(["pending", "ready"]).toContain(file.ai_vectors);
  expect((await waitForMeaning(c, file.id, 30_000)).ai_vectors).toBe("ready");
}

/**
 * Asks each question in ai mode: "ok" where its statement's page comes first, else what came.
 * No question shares a word with its statement, so only the encoder's vectors find them.
 */
async function firstPages(c: Client): Promise<string[]> {
  const first = [];
  for (const [i, p] of PAIRS.entries()) {
    const body = await askAi(c, p.question);
    expect(body.vector_source).toBe("all-MiniLM-L6-v2");
    expect(body.fallbacks).toBeUndefined();
    first.push(
      body.results[0]?.locator.page === i + 1
        ? "ok"
        : `${p.question} -> page ${body.results[0]?.locator.page} of ${body.results.map((r) => r.locator.page).join(",")}`,
    );
  }
  return first;
}

describe("with the model", () => {
  let locus: LocusProcess;
  let c: Client;
  beforeAll(async () => {
    locus = await startLocus({
      // Every user's vectors through an approximate index (built at once for ten passages).
      env: {
        LOCUS_EMBEDDER: "encoder",
        LOCUS_METRICS_PORT: "0",
        LOCUS_RATE_LIMIT_PRO: "1000",
        LOCUS_VECTOR_INDEX_MIN: "1",
      },
    });
    c = client(locus.baseUrl, (await createUserWithKey(locus.dataDir, { plan: "pro" })).key);
    await uploadStatementsEncoded(c);
    // Counted before the record was told.
    const samples = await scrapeMetrics(`${internalUrl(locus)}/metrics`);
    expect(metricValue(samples, "locus_passages_encoded_total", { engine: "all-MiniLM-L6-v2" })).toBe(
      PAIRS.length,
    );
  }, 120_000);
  afterAll(async () => {
    expect(await locus.stop()).toBe(0);
    removeDataDir(locus.dataDir);
  });

  it("puts the page that answers a question asked in other words first, for each of ten, by the user's approximate index", async () => {
    expect(await firstPages(c)).toEqual(PAIRS.map(() => "ok"));
    const samples = await scrapeMetrics(`${internalUrl(locus)}/metrics`);
    expect(metricValue(samples, "locus_vector_searches_total", { method: "approximate" })).toBe(PAIRS.length);
    expect(metricValue(samples, "locus_vector_searches_total", { method: "exact" })).toBe(0);
  });

  it("is not degraded on /readyz", async () => {
    const readyz = await internalReadyz(locus);
    expect(readyz.status).toBe("ready");
    expect(readyz.checks).not.toHaveProperty("sentence_encoder");
    expect(readyz.checks).not.toHaveProperty("answer_judge");
  });
});

describe("in the split shape", () => {
  it("encodes in the encoder process, from RabbitMQ's encoder queue into Postgres, after the file is ready", async () => {
    // The search service answers by the user's approximate index of their vectors in Postgres.
    const stack = await startSplitStack({
      env: { LOCUS_EMBEDDER: "encoder", LOCUS_RATE_LIMIT_PRO: "1000", LOCUS_VECTOR_INDEX_MIN: "1" },
    });
    try {
      expect(stack.logs.join("\n")).toMatch(/locus-split: encoder started with pid/);
      const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
      const c = client(stack.baseUrl, key);
      await uploadStatementsEncoded(c);
      expect(await firstPages(c)).toEqual(PAIRS.map(() => "ok"));
      // The operator sees the stage's queue (empty: every file encoded) with the others.
      const status = await runCli(stack.dataDir, ["status"], { ...stack.cliEnv, LOCUS_EMBEDDER: "encoder" });
      // Waiting, consumers (the one encoder process), dead letters.
      expect(status.stdout).toMatch(/^\s*encoder\s+0\s+1\s+0\s/m);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  }, 240_000);
});

describe("without the model files", () => {
  it("starts, answers on the word vectors, and says ai mode is degraded everywhere", async () => {
    const noModel = tempDataDir("locus-no-encoder-");
    const locus = await startLocus({
      env: { LOCUS_EMBEDDER: "encoder", LOCUS_MODELS_DIR: noModel, LOCUS_METRICS_PORT: "0" },
    });
    try {
      const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
      const c = client(locus.baseUrl, key);
      const file = await uploadAndWait(
        c,
        await makePdf({ pages: [[PAIRS[0]!.statement]] }),
        "one.pdf",
        60_000,
      );
      expect(file.status).toBe("ready");
      const body = await askAi(c, PAIRS[0]!.question);
      expect(body.vector_source).toBe("local");
      expect(body.fallbacks).toEqual([
        {
          component: "embedder",
          engine: "all-MiniLM-L6-v2",
          used: "local",
          reason: expect.stringMatching(/model files are missing/) as string,
        },
      ]);
      // No path of the server in what a client reads.
      expect(JSON.stringify(body)).not.toContain(noModel);
      expect(await internalReadyz(locus)).toMatchObject({
        status: "ready",
        checks: { sentence_encoder: "degraded", answer_judge: "degraded" },
      });

      const signUp = await fetch(`${locus.baseUrl}/dashboard/api/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "reader@example.com", password: "a long and unusual passphrase" }),
      });
      const { notices } = (await signUp.json()) as { notices: string[] };
      expect(notices).toContainEqual(expect.stringMatching(/^ai search is degraded: the sentence encoder/));
    } finally {
      await locus.stop();
      removeDataDir(locus.dataDir);
      removeDataDir(noModel);
    }
  }, 120_000);

  it("without the answer judge's alone: keeps the encoder, answers, and says answer_judge is degraded", async () => {
    const encoderOnly = tempDataDir("locus-no-judge-");
    for (const f of Object.values(SENTENCE_MODEL.files))
      copyFileSync(join(DEFAULT_MODELS_DIR, f.name), join(encoderOnly, f.name));
    const locus = await startLocus({
      env: { LOCUS_EMBEDDER: "encoder", LOCUS_MODELS_DIR: encoderOnly, LOCUS_METRICS_PORT: "0" },
    });
    try {
      const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
      const c = client(locus.baseUrl, key);
      await uploadStatementsEncoded(c);
      // Asked in the statement's own words: the encoder alone finds it answers.
      const body = (await askAi(c, PAIRS[0]!.statement)) as AiBody & { answered: boolean };
      expect(body.vector_source).toBe("all-MiniLM-L6-v2");
      expect(body.fallbacks).toBeUndefined();
      expect(body.answered).toBe(true);
      const readyz = await internalReadyz(locus);
      expect(readyz).toMatchObject({ status: "ready", checks: { answer_judge: "degraded" } });
      expect(readyz.checks).not.toHaveProperty("sentence_encoder");
    } finally {
      await locus.stop();
      removeDataDir(locus.dataDir);
      removeDataDir(encoderOnly);
    }
  }, 120_000);
});
