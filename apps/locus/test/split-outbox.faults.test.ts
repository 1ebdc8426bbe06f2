import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import pg from "pg";
import { S3BlobStore } from "@locus/blob-store";
import { fileBlobKey } from "@locus/contracts";
import {
  client,
  createUserWithKey,
  fileRecordThrough,
  metricValue,
  recordResilience,
  scrapeMetrics,
  settleFiles,
  startSplitStack,
  TEST_DATABASE_URL,
  tokenPdf,
  type Client,
  type SplitStack,
} from "@locus/testing";

/**
 * The crashes the outbox and the forward-only states are for, in the split shape (real PostgreSQL,
 * RabbitMQ, Redis and an S3 server): an upload stored but never announced, a files service killed
 * right after its 200, and, as the last resort, a record left with no processing request at all.
 * Figures go to test-artifacts/resilience/split-outbox.json (see `pnpm test:resilience`). A fault
 * suite (run alone): its timings are held to bounds a busy machine would blur.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => Math.round(ms / 100) / 10;

let stack: SplitStack;
let gateways: Client[];
const report: Record<string, unknown> = {};
const fileRecord = (id: string) => fileRecordThrough(gateways, id);
const settle = (ids: string[], timeoutMs: number) => settleFiles(gateways, ids, timeoutMs);

beforeAll(async () => {
  stack = await startSplitStack({
    env: {
      LOCUS_RATE_LIMIT_PRO: "1000",
      LOCUS_MAX_ATTEMPTS: "5",
      // A record left with no processing request at all (the last resort, since the outbox stores
      // one with every upload) is picked up by the stall sweep: 20 s here instead of ten minutes,
      // so the suite sees it end.
      LOCUS_STALLED_AFTER_S: "20",
    },
  });
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  gateways = stack.gatewayUrls.map((url) => client(url, key));
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  recordResilience("split-outbox", { measured_at: new Date().toISOString(), ...report });
}, 180_000);

async function strandUpload(
  word: string,
  within: (
    db: pg.Client,
    stored: { fileId: string; userId: string; blobKey: string; now: Date },
  ) => Promise<void> = () => Promise.resolve(),
): Promise<{ fileId: string; storedAt: Date }> {
  const res = await gateways[0]!.upload(await tokenPdf(`anchor${word}`), "anchor.pdf");
  const anchor = ((await res.json()) as { file: { id: string } }).file.id;
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  try {
    const { rows } = await db.query<{ user_id: string }>(
      `SELECT user_id FROM "${stack.schema}".files WHERE id = $1`,
      [anchor],
    );
    const userId = rows[0]!.user_id;
    const fileId = randomUUID();
    const pdf = await tokenPdf(word);
    const blobKey = fileBlobKey(userId, fileId);
    await new S3BlobStore(stack.blobStoreOptions).put(blobKey, Readable.from([pdf]));
    const now = new Date();
    await db.query("BEGIN");
    await db.query(
      `INSERT INTO "${stack.schema}".files
         (id, user_id, original_name, file_type, mime_type, size_bytes, blob_key, status, created_at, updated_at)
       VALUES ($1, $2, $3, 'pdf', 'application/pdf', $4, $5, 'pending', $6, $6)`,
      [fileId, userId, `${word}.pdf`, pdf.length, blobKey, now.toISOString()],
    );
    await within(db, { fileId, userId, blobKey, now });
    await db.query("COMMIT");
    return { fileId, storedAt: now };
  } finally {
    await db.end();
  }
}

it("publishes an upload its files service stored but died before announcing from the outbox, long before the stall sweep", async () => {
  // What such a crash leaves now: the bytes, the record `pending` and, in the same transaction, its
  // processing request held in the outbox until the request completes (UPLOAD_HOLD_MS, 10 s).
  const { fileId, storedAt } = await strandUpload(
    "orphaned1q",
    async (db, { fileId, userId, blobKey, now }) => {
      const message = { fileId, userId, kind: "pdf", blobKey, mimeType: "application/pdf" };
      await db.query(
        `INSERT INTO "${stack.schema}".outbox (id, topic, message, file_id, available_at, created_at)
       VALUES ($1, 'file.uploaded.pdf', $2, $3, $4, $5)`,
        [
          randomUUID(),
          JSON.stringify(message),
          fileId,
          new Date(now.getTime() + 10_000).toISOString(),
          now.toISOString(),
        ],
      );
    },
  );

  const [final] = [...(await settle([fileId], 60_000)).values()];
  expect(final).toMatchObject({ status: "ready", passage_count: 1 });
  const readyS = seconds(Date.now() - storedAt.getTime());
  // The stall sweep (LOCUS_STALLED_AFTER_S=20 here) could not have taken it before 20 s.
  expect(readyS).toBeLessThan(19);
  report.outbox = { hold_s: 10, orphaned_upload_ready_s: readyS };
}, 120_000);

it("a files service killed right after the 200 brings the upload to ready within 30 s of coming back: it stays ready, extracted once", async () => {
  const extracted = async () =>
    metricValue(
      await scrapeMetrics(`${stack.serviceUrls["extractor-pdf"]!}/metrics`),
      "locus_extracted_pages_total",
      {
        kind: "pdf",
      },
    );
  const timings: number[] = [];
  for (let round = 0; round < 3; round++) {
    const before = await extracted();
    const res = await gateways[round % gateways.length]!.upload(
      await tokenPdf(`killed${round}q`),
      `killed-${round}.pdf`,
    );
    expect(res.status).toBe(200);
    const pid = stack.pidOf("files");
    stack.killService("files");
    const id = ((await res.json()) as { file: { id: string } }).file.id;
    while (stack.pidOf("files") === pid) await sleep(50);
    for (;;) {
      const ok = await fetch(`${stack.serviceUrls.files!}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await sleep(50);
    }
    const back = Date.now();
    const [final] = [...(await settle([id], 30_000)).values()];
    expect(final).toMatchObject({ status: "ready", passage_count: 1 });
    timings.push(seconds(Date.now() - back));
    // The reports that were in flight when it died change nothing now (#35: it went back to
    // processing, progress 0, until the stall sweep extracted it again).
    await sleep(5000);
    expect((await fileRecord(id)).body).toMatchObject({ status: "ready", progress: 1 });
    expect((await extracted()) - before).toBe(1);
  }
  report.files_killed_after_200 = { rounds: timings.length, ready_after_back_s: timings };
}, 300_000);

it("finishes a record left with no processing request, by the stall sweep (the last resort)", async () => {
  // The bytes in the bucket, the record `pending`, no message and no outbox entry.
  const { fileId } = await strandUpload("stranded0q");

  const started = Date.now();
  const [final] = [...(await settle([fileId], 120_000)).values()];
  expect(final).toMatchObject({ status: "ready", passage_count: 1 });
  // The sweep runs every half stall period (10 s) and picks files quiet for 20 s.
  report.stall_sweep = { stall_after_s: 20, stranded_upload_ready_s: seconds(Date.now() - started) };
  const search = (await (await gateways[0]!.get("/api/search?q=stranded0q")).json()) as {
    results: { file_id: string }[];
  };
  expect(search.results.map((r) => r.file_id)).toEqual([fileId]);
}, 180_000);
