import { execFile } from "node:child_process";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import amqp from "amqplib";
import pg from "pg";
import { S3BlobStore } from "@locus/blob-store";
import { RabbitMqBus } from "@locus/bus";
import { createLogger } from "@locus/runtime";
import {
  client,
  createUserWithKey,
  makePdf,
  postgresCluster,
  pageWith,
  startSplitStack,
  TEST_AMQP_URL,
  TEST_DATABASE_URL,
  waitForFile,
  type Client,
  type SplitStack,
} from "@locus/testing";

/**
 * Faults in the split shape, each with nothing lost and nothing duplicated: a worker killed
 * mid-file, the broker restarted during uploads, a poison message, the database gone and back.
 * These stop and start the machine's RabbitMQ and PostgreSQL, so `pnpm test` runs them alone,
 * after every other suite.
 */
const run = promisify(execFile);
let stack: SplitStack;
let c: Client;

interface FileBody {
  id: string;
  status: string;
  page_count: number | null;
  passage_count: number | null;
  error: { code: string } | null;
}

async function hits(q: string, fileId: string): Promise<number> {
  const body = (await (await c.get(`/api/search?q=${encodeURIComponent(q)}&limit=100`)).json()) as {
    results: { file_id: string }[];
  };
  return body.results.filter((r) => r.file_id === fileId).length;
}

async function upload(pdf: Buffer, name: string): Promise<string> {
  const res = await c.upload(pdf, name);
  expect(res.status).toBe(200);
  return ((await res.json()) as { file: { id: string } }).file.id;
}

beforeAll(async () => {
  stack = await startSplitStack({ env: { LOCUS_RATE_LIMIT_PRO: "1000", LOCUS_MAX_ATTEMPTS: "3" } });
  c = client(stack.baseUrl, (await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv })).key);
}, 180_000);

// A dozen processes stop, each finishing the work in hand (the encoder, its page of passages).
afterAll(async () => {
  await stack?.stop();
}, 180_000);

it("finishes a file whose extractor is killed mid-file, once the worker is back", async () => {
  const pages = Array.from({ length: 800 }, (_, i) =>
    pageWith(i === 699 ? "A marbled godwit rests on the mudflat." : `Page ${i + 1} on tides.`, 11),
  );
  const pdf = await makePdf({ pages });
  const id = await upload(pdf, "long.pdf");
  // Wait until the extractor is into the file, then kill it.
  for (;;) {
    const f = (await (await c.get(`/api/files/${id}`)).json()) as FileBody & { progress: number | null };
    if (f.status === "processing") break;
    if (f.status === "ready") throw new Error("the file finished before the extractor could be killed");
    await new Promise((r) => setTimeout(r, 50));
  }
  const before = stack.pidOf("extractor-pdf");
  stack.killService("extractor-pdf");

  const done = (await waitForFile(c, id, 120_000)) as unknown as FileBody;
  expect(done).toMatchObject({ status: "ready", page_count: 800 });
  expect(stack.pidOf("extractor-pdf")).not.toBe(before);
  expect(await hits("marbled godwit mudflat", id)).toBe(1);

  // Nothing twice: the same PDF processed without a fault gives the same passages.
  const control = (await waitForFile(c, await upload(pdf, "control.pdf"), 120_000)) as unknown as FileBody;
  expect(done.passage_count).toBe(control.passage_count);
}, 240_000);

it("loses and duplicates nothing when RabbitMQ restarts during a run of uploads", async () => {
  const ids: string[] = [];
  const phrase = (i: number) =>
    `Restart survivor number ${["one", "two", "three", "four", "five", "six"][i]} sings.`;
  for (let i = 0; i < 3; i++)
    ids.push(await upload(await makePdf({ pages: [pageWith(phrase(i), 4)] }), `r${i}.pdf`));
  await run("rabbitmqctl", ["stop_app"]);
  try {
    // Uploads during the outage wait for the broker (publishes are confirmed) or are re-queued later.
    const during = (async () => {
      for (let i = 3; i < 6; i++)
        ids.push(await upload(await makePdf({ pages: [pageWith(phrase(i), 4)] }), `r${i}.pdf`));
    })();
    await new Promise((r) => setTimeout(r, 3000));
    await run("rabbitmqctl", ["start_app"]);
    await during;
  } finally {
    await run("rabbitmqctl", ["start_app"]);
  }
  for (const [i, id] of ids.entries()) {
    expect(await waitForFile(c, id, 120_000)).toMatchObject({ status: "ready" });
    expect(await hits(phrase(i), id)).toBe(1);
  }
}, 240_000);

it("fails the file of a poison message after its retries, dead-letters it, and keeps the rest moving", async () => {
  const victim = await upload(await makePdf({ pages: [pageWith("Soon to be poisoned.", 2)] }), "victim.pdf");
  await waitForFile(c, victim);
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  // Extracted again (as `files reextract` or a retry sends it back): a finished file is never
  // failed by a late report, only one whose processing is under way (#35).
  const { rows } = await db.query<{ user_id: string }>(
    `UPDATE "${stack.schema}".files SET status = 'processing', progress = 0.5 WHERE id = $1 RETURNING user_id`,
    [victim],
  );
  await db.end();
  const userId = rows[0]?.user_id ?? "";

  // An extraction that cannot be parsed, announced as this file's: the indexer fails on it every time.
  const blobs = new S3BlobStore(stack.blobStoreOptions);
  await blobs.put("poison/extraction.jsonl", Readable.from(["{not json\n"]));
  const bus = new RabbitMqBus({
    url: TEST_AMQP_URL,
    logger: createLogger("test", "silent"),
    prefix: stack.amqpPrefix,
  });
  await bus.publish("file.extracted", {
    fileId: victim,
    userId,
    extractionKey: "poison/extraction.jsonl",
    passageCount: 1,
    pageCount: 1,
  });
  await bus.close();

  const bystander = await upload(
    await makePdf({ pages: [pageWith("An innocent bystander file.", 3)] }),
    "ok.pdf",
  );
  expect(await waitForFile(c, bystander, 60_000)).toMatchObject({ status: "ready" });
  // Poll until the poison has failed the victim.
  let failed: FileBody | undefined;
  for (let i = 0; i < 300 && failed?.status !== "failed"; i++) {
    failed = (await (await c.get(`/api/files/${victim}`)).json()) as FileBody;
    if (failed.status !== "failed") await new Promise((r) => setTimeout(r, 100));
  }
  expect(failed?.status).toBe("failed");
  expect(failed?.error?.code).toBe("indexing_failed");

  const connection = await amqp.connect(TEST_AMQP_URL);
  const channel = await connection.createChannel();
  const dead = await channel.checkQueue(`${stack.amqpPrefix}indexer.dead`);
  await connection.close();
  expect(dead.messageCount).toBe(1);
}, 120_000);

it("answers 503 while PostgreSQL is down, and recovers when it is back", async () => {
  await postgresCluster("stop");
  try {
    const res = await c.get("/api/files");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(((await res.json()) as { detail: string }).detail).toMatch(/unavailable; try again/);
  } finally {
    await postgresCluster("start");
  }
  let status = 0;
  for (let i = 0; i < 150 && status !== 200; i++) {
    status = (await c.get("/api/files")).status;
    if (status !== 200) await new Promise((r) => setTimeout(r, 200));
  }
  expect(status).toBe(200);
  const id = await upload(
    await makePdf({ pages: [pageWith("After the database came back.", 5)] }),
    "after.pdf",
  );
  expect(await waitForFile(c, id, 60_000)).toMatchObject({ status: "ready" });
}, 120_000);
