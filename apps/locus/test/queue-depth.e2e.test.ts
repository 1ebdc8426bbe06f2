import { randomBytes, randomUUID } from "node:crypto";
import { RabbitMqBus } from "@locus/bus";
import { CONSUMER_GROUPS } from "@locus/contracts";
import { createLogger } from "@locus/runtime";
import {
  deleteBrokerTopology,
  dropTestSchema,
  removeDataDir,
  scrapeMetrics,
  sharedPartsEnv,
  spawnLocus,
  startSigningS3Server,
  tempDataDir,
  TEST_AMQP_URL,
  type LocusProcess,
  type SigningS3Server,
} from "@locus/testing";

/**
 * The split shape's queue depths come from the files service, for every consumer group: a group
 * whose consumers are stopped (here: none of them runs at all) still shows what waits for it, which
 * LocusQueueBacklog and the KEDA triggers need most then (issue #39: extractor-pdf stopped, 5
 * messages at the broker, no depth series anywhere). One files process on the machine's Postgres
 * and RabbitMQ, under a schema and a queue prefix of its own.
 */
const id = randomBytes(4).toString("hex");
const schema = `locus_t${id}`;
const prefix = `t${id}.`;
let s3: SigningS3Server;
let files: LocusProcess;

beforeAll(async () => {
  // No file is stored here: the bucket need not exist.
  s3 = await startSigningS3Server();
  const bucket = `locus-${id}`;
  const env = {
    LOCUS_TARGETS: "files",
    HOST: "127.0.0.1",
    PORT: "0",
    LOCUS_LOG_LEVEL: "info",
    LOCUS_INTERNAL_SECRET: randomBytes(32).toString("base64url"),
    ...sharedPartsEnv({ schema, amqpPrefix: prefix, bucket, s3 }),
  };
  const dataDir = tempDataDir("locus-files-");
  files = await spawnLocus({
    script: "apps/locus/src/main.ts",
    env: { ...env, LOCUS_DATA_DIR: dataDir },
    dataDir,
    cliEnv: {},
    ready: /"url":"(http:\/\/127\.0\.0\.1:\d+)".*"msg":"listening"/,
    timeoutMs: 120_000,
  });
}, 180_000);

afterAll(async () => {
  await files?.stop();
  if (files) removeDataDir(files.dataDir);
  await dropTestSchema(schema);
  await deleteBrokerTopology(prefix);
  await s3?.stop();
});

it("reports every consumer group's queue depth, a group whose consumers are all stopped included", async () => {
  // Five PDFs uploaded while no PDF extractor runs: they wait in extractor-pdf's queue.
  const bus = new RabbitMqBus({ url: TEST_AMQP_URL, prefix, logger: createLogger("test", "silent") });
  try {
    await bus.connect();
    for (let i = 0; i < 5; i++) {
      await bus.publish("file.uploaded.pdf", {
        fileId: randomUUID(),
        userId: randomUUID(),
        kind: "pdf",
        blobKey: `originals/${randomUUID()}`,
        mimeType: "application/pdf",
      });
    }
  } finally {
    await bus.close();
  }
  const samples = await scrapeMetrics(`${files.baseUrl}/metrics`);
  const depthOf = (group: string) =>
    samples.find((s) => s.name === "locus_bus_queue_depth" && s.labels.group === group)?.value;
  expect(depthOf("extractor-pdf")).toBe(5);
  // Every group of the deployment (the meaning stage's where it runs), not only this process's own.
  const reported = samples.filter((s) => s.name === "locus_bus_queue_depth").map((s) => s.labels.group);
  for (const group of Object.keys(CONSUMER_GROUPS).filter((g) => g !== "encoder")) {
    expect(reported).toContain(group);
  }
}, 60_000);
