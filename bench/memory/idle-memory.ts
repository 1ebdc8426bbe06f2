/**
 * `pnpm bench:memory`: each target of the split shape started alone, the way a container runs it,
 * both ways Locus can run, interleaved in the same session so that a busy machine weighs on both
 * alike: from the TypeScript sources through tsx (`node --import tsx apps/locus/src/main.ts`, what
 * the image ran before) and from the built bundle (`node apps/locus/dist/main.js`, `pnpm build`).
 * For each start it records the time from spawn to the first 200 from /readyz and, after a quiet
 * settle, the idle resident memory of the process and its children (what a container's memory
 * counts). Writes bench/memory/idle-memory.json (read by deploy/manifest-checks/kubernetes-memory.ts,
 * which holds the Kubernetes memory requests to it) and bench/memory/idle-memory.md.
 *
 * Needs PostgreSQL, RabbitMQ and Redis as `.ci/services.sh` leaves them; S3 is the tests' signing
 * server. Options: --rounds N (default 2), --settle-ms N (default 5000), --only target,target,
 * --node PATH (the Node that runs Locus, default this one's: how the image's Node 22 was tried on a
 * machine with Node 20), --report NAME (default idle-memory: the files written are NAME.json and
 * NAME.md; give another name for a trial, so the measurement the manifests are held to stays).
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { format } from "prettier";
import { TARGETS } from "@locus/runtime";
import {
  REPO_ROOT,
  removeDataDir,
  sharedPartsEnv,
  startSigningS3Server,
  tempDataDir,
  TEST_DATABASE_URL,
} from "@locus/testing";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    "settle-ms": { type: "string", default: "5000" },
    only: { type: "string" },
    node: { type: "string", default: process.execPath },
    report: { type: "string", default: "idle-memory" },
  },
});
const ROUNDS = Number(values.rounds);
const SETTLE_MS = Number(values["settle-ms"]);
const NODE = values.node;
const NODE_VERSION = spawnSync(NODE, ["--version"], { encoding: "utf8" }).stdout.trim();
const RUNNERS = {
  tsx: ["--import", "tsx", join(REPO_ROOT, "apps/locus/src/main.ts")],
  bundle: [join(REPO_ROOT, "apps/locus/dist/main.js")],
} as const;
type Runner = keyof typeof RUNNERS;
const targets = TARGETS.filter((t) => t !== "all").filter(
  (t) => values.only === undefined || values.only.split(",").includes(t),
);

/** Resident memory of a process and all its descendants, in MiB (what the container is charged). */
function treeRssMiB(pid: number): number {
  let kb = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop() as number;
    try {
      const status = readFileSync(`/proc/${current}/status`, "utf8");
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      for (const tid of spawnSync("ls", [`/proc/${current}/task`], { encoding: "utf8" }).stdout.split(
        /\s+/,
      )) {
        if (!tid) continue;
        const children = readFileSync(`/proc/${current}/task/${tid}/children`, "utf8").trim();
        if (children) pending.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // the process ended between the listing and the read
    }
  }
  return kb / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let nextPort = 19400;
async function measure(runner: Runner, target: string, env: NodeJS.ProcessEnv) {
  const port = nextPort++;
  const started = performance.now();
  const child = spawn(NODE, [...RUNNERS[runner]], {
    cwd: REPO_ROOT,
    env: { ...env, LOCUS_TARGETS: target, LOCUS_SERVICE_NAME: target, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    let readyMs: number | undefined;
    while (performance.now() - started < 120_000 && child.exitCode === null) {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (res?.status === 200) {
        readyMs = performance.now() - started;
        break;
      }
      await sleep(100);
    }
    if (readyMs === undefined) throw new Error(`${target} (${runner}) was not ready:\n${stderr}`);
    await sleep(SETTLE_MS);
    // The median of three readings a second apart: idle, but timers and GC still move it a little.
    const readings: number[] = [];
    for (let i = 0; i < 3; i++) {
      readings.push(treeRssMiB(child.pid as number));
      if (i < 2) await sleep(1000);
    }
    readings.sort((a, b) => a - b);
    return { readyMs, rssMiB: readings[1] as number };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const build = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: REPO_ROOT, stdio: "inherit" });
if (build.status !== 0) process.exit(1);

// The tests' S3 server needs its bucket made; @aws-sdk/client-s3 is @locus/testing's dependency,
// not the benchmarks', so it is loaded from there, typed by what is used of it.
interface S3Admin {
  send(command: unknown): Promise<unknown>;
  destroy(): void;
}
const { S3Client, CreateBucketCommand } = createRequire(import.meta.resolve("@locus/testing"))(
  "@aws-sdk/client-s3",
) as {
  S3Client: new (config: object) => S3Admin;
  CreateBucketCommand: new (input: { Bucket: string }) => unknown;
};
const s3 = await startSigningS3Server();
const id = Date.now().toString(36);
const bucket = `locus-memory-${id}`;
const admin = new S3Client({
  region: s3.region,
  endpoint: s3.endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
});
await admin.send(new CreateBucketCommand({ Bucket: bucket }));
admin.destroy();
const dataDir = tempDataDir("locus-memory-");
const schema = `locus_mem${id}`;
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  NODE_ENV: "production",
  HOST: "127.0.0.1",
  LOCUS_DATA_DIR: dataDir,
  ...sharedPartsEnv({ schema, amqpPrefix: `mem${id}.`, bucket, s3 }),
  LOCUS_INTERNAL_SECRET: "memory-benchmark-internal-secret-0123456789",
  LOCUS_EMBEDDER: "encoder",
  LOCUS_ENCODER_URL: "http://127.0.0.1:1",
  LOCUS_FILES_URL: "http://127.0.0.1:1",
  LOCUS_SEARCH_URL: "http://127.0.0.1:1",
  LOCUS_WEBHOOKS_URL: "http://127.0.0.1:1",
};
// The schema, as the migrate Job makes it before the Deployments start.
const migrate = spawnSync(NODE, ["apps/locus/dist/cli.js", "migrate"], {
  cwd: REPO_ROOT,
  env,
  encoding: "utf8",
});
if (migrate.status !== 0) throw new Error(`migrate failed:\n${migrate.stderr}`);

const samples: Record<string, Record<Runner, { readyMs: number; rssMiB: number }[]>> = {};
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      // Which way goes first alternates by round, so neither always meets a warmer page cache.
      const order: Runner[] = round % 2 === 0 ? ["tsx", "bundle"] : ["bundle", "tsx"];
      for (const runner of order) {
        const sample = await measure(runner, target, env);
        ((samples[target] ??= { tsx: [], bundle: [] })[runner] as unknown[]).push(sample);
        process.stderr.write(
          `round ${round + 1} ${target} ${runner}: ready ${Math.round(sample.readyMs)} ms, idle ${Math.round(sample.rssMiB)} MiB\n`,
        );
      }
    }
  }
} finally {
  await s3.stop();
  removeDataDir(dataDir);
  spawnSync("psql", [TEST_DATABASE_URL, "-qc", `DROP SCHEMA IF EXISTS ${schema} CASCADE`]);
}

const figures = Object.fromEntries(
  Object.entries(samples).map(([target, byRunner]) => [
    target,
    Object.fromEntries(
      (Object.keys(byRunner) as Runner[]).map((runner) => [
        runner,
        {
          idleRssMiB: Math.round(median(byRunner[runner].map((s) => s.rssMiB))),
          maxIdleRssMiB: Math.round(Math.max(...byRunner[runner].map((s) => s.rssMiB))),
          readyMs: Math.round(median(byRunner[runner].map((s) => s.readyMs))),
        },
      ]),
    ),
  ]),
);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GB, Locus on Node ${NODE_VERSION}`;
const report = {
  measured: new Date().toISOString(),
  machine,
  rounds: ROUNDS,
  settleMs: SETTLE_MS,
  note: "Idle: after /readyz answered 200 and a settle, no traffic. Resident memory of the process and its children, median of the rounds (each the median of 3 readings a second apart). Figures from one machine shared with other work: compare tsx and bundle, which ran interleaved.",
  targets: figures,
};
writeFileSync(join(REPO_ROOT, `bench/memory/${values.report}.json`), `${JSON.stringify(report, null, 2)}\n`);
const rows = Object.entries(figures).map(([target, f]) => {
  const t = f.tsx as { idleRssMiB: number; readyMs: number };
  const b = f.bundle as { idleRssMiB: number; maxIdleRssMiB: number; readyMs: number };
  return `| ${target} | ${t.idleRssMiB} | ${b.idleRssMiB} | ${b.maxIdleRssMiB} | ${t.readyMs} | ${b.readyMs} |`;
});
// Formatted as `pnpm format:check` wants it.
writeFileSync(
  join(REPO_ROOT, `bench/memory/${values.report}.md`),
  await format(
    [
      "# Idle memory and start time per target: tsx vs the built bundle",
      "",
      `Measured ${report.measured} by \`pnpm bench:memory\` on this machine: ${machine}; ${ROUNDS} rounds, tsx and bundle interleaved, settle ${SETTLE_MS} ms.`,
      "Idle resident memory (MiB) of the process and its children after /readyz, no traffic; time (ms) from spawn to the first 200 from /readyz. Medians.",
      "The bundle's highest idle figure is the floor deploy/manifest-checks/kubernetes-memory.ts holds each Kubernetes memory request to.",
      "The machine was shared with other work while measuring: the figures are noisy, the comparison within a row is the point.",
      "",
      "| target | idle MiB, tsx | idle MiB, bundle | bundle's highest | ready ms, tsx | ready ms, bundle |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
      ...rows,
      "",
    ].join("\n"),
    { parser: "markdown" },
  ),
);
process.stdout.write(`${rows.join("\n")}\n`);
