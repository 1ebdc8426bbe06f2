import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { CONSUMER_GROUPS, fileBlobKey, type MessageOf } from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { RabbitMqBus } from "@locus/bus";
import { createLogger } from "@locus/runtime";
import { deleteBrokerTopology, TEST_AMQP_URL } from "@locus/testing";

// Real RabbitMQ and real worker processes that really die (SIGKILL from inside their reader).
const AMQP_URL = TEST_AMQP_URL;
const logger = createLogger("test", "silent");
const DELIVERY_LIMIT = 2;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "locus-abandon-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the crashing worker until it exits (killed by its own reader), or `stop` says enough. */
function runWorker(prefix: string, blobDir: string, stop: Promise<unknown>): Promise<string> {
  const script = fileURLToPath(new URL("./fixtures/crashing-extractor.ts", import.meta.url));
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  const child = spawn(
    process.execPath,
    ["--import", "tsx", script, AMQP_URL, prefix, blobDir, String(DELIVERY_LIMIT)],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  void stop.then(() => child.kill("SIGKILL"));
  return new Promise((resolve) => child.on("exit", () => resolve(output)));
}

it("fails a file that kills every worker reading it with processing_abandoned, after the delivery limit, instead of looping", async () => {
  const prefix = `test-${randomUUID().slice(0, 8)}.`;
  const blobDir = join(dir, "blobs");
  const blobs = new LocalBlobStore(blobDir);
  const bus = new RabbitMqBus({
    url: AMQP_URL,
    prefix,
    logger,
    workQueue: { deliveryLimit: DELIVERY_LIMIT },
  });
  try {
    await bus.declareGroups(CONSUMER_GROUPS);
    let failed!: (message: MessageOf<"file.failed">) => void;
    const failure = new Promise<MessageOf<"file.failed">>((resolve) => (failed = resolve));
    await bus.subscribe(
      { group: "failures-watcher", topics: ["file.failed"], concurrency: 1, maxAttempts: 1 },
      (delivery) => {
        failed(delivery.message);
        return Promise.resolve();
      },
    );
    const userId = randomUUID();
    const fileId = randomUUID();
    const blobKey = fileBlobKey(userId, fileId);
    await blobs.put(blobKey, Readable.from([Buffer.from("%PDF-1.7 a file no worker survives")]));
    await bus.publish("file.uploaded.pdf", {
      fileId,
      userId,
      kind: "pdf",
      blobKey,
      mimeType: "application/pdf",
    });

    // Restarted as Kubernetes restarts a crashed pod, until the file is given up on: failed, and
    // its message in dead letters (then the last worker, which lives on, is stopped).
    const done = failure.then(async () => {
      while ((await bus.deadLetterCount("extractor-pdf")) === 0) await new Promise((r) => setTimeout(r, 50));
    });
    const runs: string[] = [];
    let settled = false;
    void done.then(() => (settled = true));
    while (!settled && runs.length < DELIVERY_LIMIT + 3) runs.push(await runWorker(prefix, blobDir, done));

    const message = await failure;
    expect(message).toMatchObject({ fileId, userId, error: { code: "processing_abandoned" } });
    expect(message.error.message).toMatch(
      /^Locus gave up on this file: the PDF extraction stopped before finishing/,
    );
    // Each of the first DELIVERY_LIMIT workers died reading it; the next never read it at all.
    expect(runs.slice(0, DELIVERY_LIMIT).every((output) => output.includes("reading"))).toBe(true);
    expect(runs).toHaveLength(DELIVERY_LIMIT + 1);
    expect(runs[DELIVERY_LIMIT]).not.toContain("reading");
    const [letter] = await bus.deadLetters("extractor-pdf", 10);
    expect(letter).toMatchObject({ topic: "file.uploaded.pdf", payload: { fileId } });
    expect(letter!.reason).toMatch(/^abandoned: delivered 3 times/);
  } finally {
    await bus.close();
    await deleteBrokerTopology(prefix);
  }
}, 60_000);
