import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import {
  createUserWithKey,
  makePdf,
  pageWith,
  REPO_ROOT,
  removeDataDir,
  startLocus,
  type LocusProcess,
} from "@locus/testing";
import { createLocusClient, LocusApiError, LocusFileFailedError } from "../src/index.ts";

/**
 * Both SDKs against one real Locus (all-in-one): the TypeScript client here, then the Python
 * client's own unittest suite (clients/python), spawned against the same server.
 */

let locus: LocusProcess;
let apiKey: string;

/** Requests a second a free account may send here: a dashboard sign-up makes free accounts. */
const FREE_RATE_LIMIT = 20;
/**
 * Requests a second a pro account may send here: the rate-limit burst's, low so that the burst
 * outruns the limit however slowly a busy machine serves it (a server starved of CPU once let 46
 * requests through at 20 a second without refusing one).
 */
const PRO_RATE_LIMIT = 4;

/**
 * A new account and a live key for it, made the way a person makes them: signing up on the
 * dashboard's API and creating a key there (a fraction of a second; the CLI takes seconds).
 */
async function signUpWithLiveKey(baseUrl: string): Promise<string> {
  const email = `sdk-${randomBytes(6).toString("hex")}@example.com`;
  const signUp = await fetch(`${baseUrl}/dashboard/api/signup`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery staple" }),
  });
  expect(signUp.status).toBe(201);
  const { csrf } = (await signUp.json()) as { csrf: string };
  const cookie = signUp.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const created = await fetch(`${baseUrl}/dashboard/api/keys`, {
    method: "POST",
    headers: { "Content-Type": "application/json", cookie, "X-CSRF-Token": csrf },
    body: JSON.stringify({ name: "sdk", type: "live" }),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { key: string }).key;
}

beforeAll(async () => {
  locus = await startLocus({
    env: { LOCUS_RATE_LIMIT_FREE: String(FREE_RATE_LIMIT), LOCUS_RATE_LIMIT_PRO: String(PRO_RATE_LIMIT) },
  });
  apiKey = await signUpWithLiveKey(locus.baseUrl);
}, 120_000);

afterAll(async () => {
  if (!locus) return;
  await locus.stop();
  removeDataDir(locus.dataDir);
  // A graceful stop lets the extraction in flight finish first: slow on a loaded runner.
}, 120_000);

describe("the TypeScript client (@locus/client)", () => {
  it("uploads a PDF with progress, waits until it is ready, and finds the passage with its locator", async () => {
    const client = createLocusClient({ baseUrl: locus.baseUrl, apiKey });
    const phrase = "The migratory kestrel returns to the valley every spring.";
    // Random words on the later pages, so the file is larger than a few upload chunks (64 KiB).
    const filler = Array.from({ length: 59 }, () =>
      Array.from({ length: 40 }, () => randomBytes(40).toString("hex")),
    );
    const pdf = await makePdf({ pages: [pageWith(phrase, 12), ...filler] });
    expect(pdf.length).toBeGreaterThan(2 * 64 * 1024);

    const progress: [number, number][] = [];
    const uploaded = await client.upload(new Blob([new Uint8Array(pdf)]), {
      name: "kestrels – spring.pdf",
      metadata: { team: "birds" },
      onProgress: (sent, total) => progress.push([sent, total]),
    });
    expect(uploaded).toMatchObject({ original_name: "kestrels – spring.pdf", file_type: "pdf" });
    expect(["pending", "processing"]).toContain(uploaded.status);
    // One event per chunk, rising to the whole file.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.map(([, total]) => total)).toEqual(progress.map(() => pdf.length));
    expect(progress.map(([sent]) => sent)).toEqual([...progress.map(([sent]) => sent)].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual([pdf.length, pdf.length]);

    const ready = await client.waitUntilReady(uploaded.id, { timeoutMs: 30_000, pollIntervalMs: 200 });
    expect(ready).toMatchObject({
      id: uploaded.id,
      status: "ready",
      page_count: 60,
      metadata: { team: "birds" },
    });

    const found = await client.search("migratory kestrel", { limit: 5, mode: "quick" });
    expect(found.count).toBeGreaterThan(0);
    const [best] = found.results;
    expect(best).toMatchObject({ file_id: uploaded.id, locator: { page: 1 } });
    expect(best!.content).toContain("migratory kestrel");
    expect(best!.locator.line).toBeLessThanOrEqual(12);
    expect(best!.locator.line_end).toBeGreaterThanOrEqual(12);

    // Filters as extra parameters: the metadata condition and a repeated file_id.
    const other = await client.search("kestrel", { metadata: { team: "fish" } });
    expect(other.count).toBe(0);
    const mine = await client.search("kestrel", { file_id: [uploaded.id], metadata: { team: "birds" } });
    expect(mine.results.map((r) => r.file_id)).toContain(uploaded.id);

    const page = await client.listFiles({ limit: 1 });
    expect(page.files.map((f) => f.id)).toEqual([uploaded.id]);

    // The generated client is there too, typed from /openapi.json.
    const { data } = await client.GET("/api/files/{file_id}/preview-url", {
      params: { path: { file_id: uploaded.id } },
    });
    expect((await fetch(data!.url)).status).toBe(200);
  });

  it("throws LocusFileFailedError with the file's error when processing fails", async () => {
    const client = createLocusClient({ baseUrl: locus.baseUrl, apiKey });
    const broken = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(2000)]);
    const uploaded = await client.upload(broken, { name: "broken.pdf" });
    const error = await client
      .waitUntilReady(uploaded.id, { timeoutMs: 30_000, pollIntervalMs: 200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocusFileFailedError);
    expect((error as LocusFileFailedError).error?.code).toBe("pdf_corrupt");
  });

  it("throws LocusApiError with the 422's detail", async () => {
    const client = createLocusClient({ baseUrl: locus.baseUrl, apiKey });
    const error = (await client.search("tea", { limit: 1000 }).catch((e: unknown) => e)) as LocusApiError;
    expect(error).toBeInstanceOf(LocusApiError);
    expect(error.status).toBe(422);
    expect(error.detail).toEqual([
      expect.objectContaining({ loc: ["query", "limit"], type: "less_than_equal" }),
    ]);
  });

  it(`rides out Locus's real rate limit (pro plan, ${PRO_RATE_LIMIT} requests a second here), waiting the Retry-After it sends`, async () => {
    const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    const waits: number[] = [];
    const statuses: number[] = [];
    const client = createLocusClient({
      baseUrl: locus.baseUrl,
      apiKey: key,
      // The burst takes about sent / PRO_RATE_LIMIT seconds; the last requests wait that many times.
      maxRetries: 12,
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        return response;
      },
      onRetry: ({ waitMs }) => waits.push(waitMs),
    });
    const pdf = await makePdf({ pages: [pageWith("A small page for the burst.", 2)] });
    // Five one-second windows' worth and more at once: at least 6 are refused unless the server
    // takes over five seconds to read them.
    const sent = 5 * PRO_RATE_LIMIT + 6;
    const burst = await Promise.all([
      ...Array.from({ length: sent - 2 }, () => client.listFiles({ limit: 5 })),
      ...Array.from({ length: 2 }, (_, i) => client.upload(pdf, { name: `burst-${i}.pdf` })),
    ]);
    expect(burst).toHaveLength(sent);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(6);
    expect(waits.length).toBe(statuses.filter((s) => s === 429).length);
    // Locus's limiter asks for the rest of its one-second window, rounded up: one second.
    expect(new Set(waits)).toEqual(new Set([1000]));

    // Without retries, the refusal itself, with what Locus said.
    const impatient = createLocusClient({ baseUrl: locus.baseUrl, apiKey: key, maxRetries: 0 });
    const refusals = await Promise.all(
      Array.from({ length: sent }, () =>
        impatient.listFiles().then(
          () => null,
          (e: unknown) => e as LocusApiError,
        ),
      ),
    );
    const refused = refusals.find((e) => e !== null);
    expect(refused).toBeInstanceOf(LocusApiError);
    expect(refused).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect(refused!.detail).toMatch(
      `Rate limit exceeded: the pro plan allows ${PRO_RATE_LIMIT} requests per second`,
    );
  });
});

describe("the Python client (clients/python)", () => {
  it("passes its unittest suite against this Locus", async () => {
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn("python3", ["-m", "unittest", "-v"], {
        cwd: join(REPO_ROOT, "clients/python"),
        env: { PATH: process.env.PATH ?? "", LOCUS_URL: locus.baseUrl, LOCUS_API_KEY: apiKey },
      });
      let output = "";
      child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
      child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
      child.on("error", reject);
      child.on("exit", (code) => resolve({ code, output }));
    });
    // The whole output on failure: which test failed, and why.
    expect({ code: run.code, output: run.code === 0 ? "" : run.output }).toEqual({ code: 0, output: "" });
    expect(run.output).toMatch(/^OK$/m);
    expect(run.output).not.toMatch(/skipped/);
    expect(run.output).toMatch(/test_upload_wait_search_list_preview_delete .* ok$/m);
    // Its waits for a file to be ready allow 120 s each (a loaded CI runner extracts slowly).
  }, 300_000);
});
