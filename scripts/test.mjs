// `pnpm test`: every test but the soaks, in two phases.
//   1. everything but the fault-injection and soak suites, in parallel (jest's workers);
//   2. the fault suites (*.faults.test.ts), one at a time, alone: they stop and start machine-wide
//      services (RabbitMQ, PostgreSQL) that phase 1's suites use;
//   3. a scan of every log line the run's Locus processes wrote, for keys, tokens and passwords.
// `--soak` adds a phase after the faults: the soak suites (*.soak.test.ts), alone, which load the
// whole machine for minutes (busy neighbours on every core). They are too long for every CI run;
// `pnpm test:resilience` runs them, and so does `--tier soak`.
// `--tier NAME` runs one tier of suites, told apart by their names (TIERS below): `pnpm test:unit`
// (no service started or needed: for your own loop), `test:engines` (Debian's tools and the models,
// no service), `test:contract`, `test:e2e`, `test:faults`.
// Other arguments go to jest in every phase (a path filter, -t, ...). Ends with one plain line,
// "jest: N passed, N failed, N skipped", and a non-zero exit on any failure, when no test ran, or
// when a test was skipped that scripts/allowed-skips.json does not list with its reason.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { provideServices } from "./test-services.mjs";

const SUITES = "<rootDir>/{apps,packages,services}/*/test/**/";
/**
 * The tiers, by the suite's file name: *.e2e.test.ts start Locus processes; *.faults.test.ts stop
 * and start machine-wide services; *.soak.test.ts load every core for minutes; *.contract.test.ts
 * hold an adapter or a service to its port's contract against the real thing (a PostgreSQL,
 * RabbitMQ, Redis, S3 or Elasticsearch server; both OCR engines on real page images);
 * *.engines.test.ts drive a real engine on this machine but no server (Poppler, tesseract,
 * LibreOffice, ffmpeg, pocketsphinx, pdf.js on long PDFs and in its threads, the ONNX models, child
 * processes held to a processor budget, Locus built whole in the test's process); every other
 * *.test.ts is a unit suite: logic on in-memory adapters (SQLite, the in-process bus, a temp
 * folder), under 30 s on 2 cores.
 */
const TIERS = {
  unit: {
    // Four workers on two cores: unit suites wait on timers and sockets about a third of the time
    // (two workers kept 1.5 cores busy), so the extra two fill the gaps. 37 s with two, 26 s.
    extra: [
      "--testPathIgnorePatterns",
      "\\.(e2e|faults|soak|contract|engines)\\.test\\.ts$",
      "--maxWorkers=4",
    ],
    services: false,
  },
  engines: { extra: ["--testMatch", `${SUITES}*.engines.test.ts`], services: false },
  contract: { extra: ["--testMatch", `${SUITES}*.contract.test.ts`], services: true },
  e2e: { extra: ["--testMatch", `${SUITES}*.e2e.test.ts`], services: true },
  faults: { extra: ["--testMatch", `${SUITES}*.faults.test.ts`, "--runInBand"], services: true },
  soak: { extra: ["--testMatch", `${SUITES}*.soak.test.ts`, "--runInBand"], services: true },
};
const tierAt = process.argv.indexOf("--tier");
const tierName = tierAt >= 0 ? process.argv[tierAt + 1] : undefined;
const tier = tierName === undefined ? undefined : TIERS[tierName];
if (tierName !== undefined && !tier) {
  console.error(`--tier must be one of ${Object.keys(TIERS).join(", ")}`);
  process.exit(2);
}
const withSoak = process.argv.includes("--soak");
const args = process.argv
  .slice(2)
  .filter((arg, i) => arg !== "--soak" && (tierAt < 0 || (i !== tierAt - 2 && i !== tierAt - 1)));

// PostgreSQL, RabbitMQ, Redis and Elasticsearch from the environment, the machine, or containers
// (scripts/test-services.mjs says how each is found). The unit tier needs none, and starts none.
const services =
  tier && !tier.services
    ? { env: {}, onMachine: new Set(), stop: () => Promise.resolve() }
    : await provideServices();
const suiteEnv = { ...process.env, ...services.env };
// The fault suites stop and start the machine's PostgreSQL and RabbitMQ: they run where those are
// the machine's own, not containers or servers named by the environment.
const faultsRunHere = services.onMachine.has("PostgreSQL") && services.onMachine.has("RabbitMQ");
// The speech suites run Debian's pocketsphinx (what Locus itself transcribes with) on speech made
// by flite; the dashboard suite drives Debian's Chromium; split.e2e runs Debian's Prometheus against
// the split stack. Same rule: installed by .ci/packages.sh where we may, named where we may not.
const onPath = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
const missingTools = ["pocketsphinx_continuous", "flite", "chromium", "prometheus"].filter(
  (cmd) => !onPath(cmd),
);
if (missingTools.length > 0) {
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.error(`${missingTools.join(", ")} missing: installing with .ci/packages.sh`);
    spawnSync("bash", [".ci/packages.sh"], { stdio: "inherit" });
  } else {
    console.error(
      `${missingTools.join(", ")} not installed: the speech, dashboard or Prometheus tests will fail. ` +
        "Install Debian's pocketsphinx, pocketsphinx-en-us, flite, chromium and prometheus (as root: bash .ci/packages.sh).",
    );
  }
}
// Every Locus process a suite starts writes its log in this run's own folder under
// test-artifacts/logs (LOCUS_TEST_LOG_DIR), scanned for secrets at the end. Its own, so that runs
// side by side (a unit loop while the e2e tier runs, a benchmark) never delete each other's logs;
// folders of runs whose process is gone are removed. The unit tier starts no Locus process.
const LOGS_ROOT = "test-artifacts/logs";
const scanLogs = !tier || tier.services;
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
};
mkdirSync(LOGS_ROOT, { recursive: true });
for (const name of readdirSync(LOGS_ROOT)) {
  const run = /^run-(\d+)$/.exec(name);
  if (run && !alive(Number(run[1]))) rmSync(join(LOGS_ROOT, name), { recursive: true, force: true });
}
const LOG_DIR = join(LOGS_ROOT, `run-${process.pid}`);
if (scanLogs) suiteEnv.LOCUS_TEST_LOG_DIR = resolve(LOG_DIR);
const dir = mkdtempSync(join(tmpdir(), "locus-jest-"));
// Locus built for this run (scripts/build.mjs, about two seconds): the processes the suites start
// run it with plain node, as the image does, at under half the processor time of tsx's start
// (packages/testing/src/locus-process.ts, entryArgs). Built fresh each run, never from an old one.
const bundle = join(dir, "bundle");
const built = spawnSync(process.execPath, ["scripts/build.mjs", bundle], {
  stdio: ["ignore", "ignore", "inherit"],
});
if (built.status !== 0) {
  console.error(`building Locus for the run failed (scripts/build.mjs exited ${built.status})`);
  process.exit(1);
}
suiteEnv.LOCUS_TEST_BUNDLE = bundle;
const phases = (
  tier
    ? [{ name: tierName, extra: tier.extra }]
    : [
        { name: "main", extra: ["--testPathIgnorePatterns", "\\.(faults|soak)\\.test\\.ts$"] },
        // testMatch (not a path pattern), so that a path filter given as an argument narrows it.
        { name: "faults", extra: TIERS.faults.extra },
        ...(withSoak ? [{ name: "soak", extra: TIERS.soak.extra }] : []),
      ]
).filter((phase) => {
  if (phase.name !== "faults" || faultsRunHere) return true;
  console.error(
    "The fault suites (*.faults.test.ts) are not run: they stop and start this machine's own PostgreSQL " +
      "and RabbitMQ, and this run does not use them.",
  );
  return false;
});

// A skipped test is a test that did not run: each must be listed, with its reason, in
// scripts/allowed-skips.json ({ suite, test: how its title starts, reason, and optionally
// onlyWithout: an environment variable whose presence makes the skip wrong }). A test left out by
// a -t/--testNamePattern given to this script is not a skip.
const ALLOWED_SKIPS = JSON.parse(readFileSync("scripts/allowed-skips.json", "utf8"));
const namePattern = (() => {
  const i = args.findIndex((a) => a === "-t" || a === "--testNamePattern");
  if (i >= 0) return args[i + 1];
  const joined = args.find((a) => a.startsWith("--testNamePattern="));
  return joined?.slice("--testNamePattern=".length);
})();
// Jest matches the pattern case-insensitively against the full name (describes and title).
const filteredOut = (fullName) => namePattern !== undefined && !new RegExp(namePattern, "i").test(fullName);
const allowedSkips = new Map(); // "suite › title" -> reason
const unlistedSkips = [];
function checkSkips(report) {
  for (const suite of report.testResults ?? []) {
    const path = relative(process.cwd(), suite.name);
    for (const test of suite.assertionResults ?? []) {
      if (!["pending", "skipped", "todo", "disabled"].includes(test.status)) continue;
      const fullName = [...(test.ancestorTitles ?? []), test.title].join(" ");
      if (test.status !== "todo" && filteredOut(fullName)) continue;
      const entry = ALLOWED_SKIPS.find(
        (e) =>
          e.suite === path &&
          test.title.startsWith(e.test) &&
          (e.onlyWithout === undefined || !suiteEnv[e.onlyWithout]),
      );
      if (entry) allowedSkips.set(`${path} › ${test.title}`, entry.reason);
      else unlistedSkips.push(`${path} › ${fullName} (${test.status})`);
    }
  }
}

const totals = { passed: 0, failed: 0, skipped: 0, suitesFailed: 0 };
let crashed = false;
/** When each suite with a failure ran: the window whose process warnings are shown at the end. */
const failedWindows = [];
for (const phase of phases) {
  const out = join(dir, `${phase.name}.json`);
  const result = spawnSync(
    process.execPath,
    [
      "--experimental-vm-modules",
      "--no-warnings=ExperimentalWarning",
      "node_modules/jest/bin/jest.js",
      ...phase.extra,
      "--passWithNoTests",
      // The report is written by then; a handle a suite leaked (a client its timed-out teardown
      // opened) must not hold the run until CI's deadline, as one did in a faults phase.
      "--forceExit",
      "--json",
      "--outputFile",
      out,
      ...args,
    ],
    { stdio: ["ignore", "inherit", "inherit"], env: suiteEnv },
  );
  let report;
  try {
    report = JSON.parse(readFileSync(out, "utf8"));
  } catch {
    console.error(`jest (${phase.name}) ended without a report (exit ${result.status})`);
    crashed = true;
    continue;
  }
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += report.numPendingTests + report.numTodoTests;
  totals.suitesFailed += report.numFailedTestSuites + report.numRuntimeErrorTestSuites;
  checkSkips(report);
  for (const suite of report.testResults) {
    if (suite.status === "failed") failedWindows.push({ from: suite.startTime, to: suite.endTime });
  }
  if (result.status !== 0 && report.numFailedTests === 0 && report.numFailedTestSuites === 0) crashed = true;
}
rmSync(dir, { recursive: true, force: true });
await services.stop();

// No key, token or password in any line any process logged during the run.
let leaked = false;
if (scanLogs && existsSync(LOG_DIR)) {
  const scan = spawnSync(process.execPath, ["--import", "tsx", "packages/testing/src/log-scan.ts"], {
    stdio: ["ignore", "inherit", "inherit"],
    env: suiteEnv,
  });
  leaked = scan.status !== 0;
}

// A failure on a clean machine is often one that does not come back on a second run: the warnings
// and errors Locus's processes logged while the failing suites ran are what explain it (a 503's
// cause is in the answering process's log only). Shown only once the scan found no secret in them.
const WARNINGS_SHOWN = 60;
if (scanLogs && !leaked && failedWindows.length > 0 && existsSync(LOG_DIR)) {
  const during = (time) => failedWindows.some((w) => time >= w.from && time <= w.to + 1000);
  const warnings = [];
  for (const name of readdirSync(LOG_DIR).filter((n) => n.endsWith(".log"))) {
    for (const line of readFileSync(join(LOG_DIR, name), "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      const time = Date.parse(entry.time);
      if (entry.level >= 40 && during(time)) warnings.push({ time, text: `${name}: ${line.slice(0, 600)}` });
    }
  }
  warnings.sort((a, b) => a.time - b.time);
  if (warnings.length > 0) {
    console.error(
      `warnings and errors the Locus processes logged while the failing suites ran (the last ${Math.min(WARNINGS_SHOWN, warnings.length)} of ${warnings.length}):`,
    );
    for (const { text } of warnings.slice(-WARNINGS_SHOWN)) console.error(text);
  }
}

for (const [test, reason] of allowedSkips) console.error(`skipped, as allowed: ${test}: ${reason}`);
for (const test of unlistedSkips) {
  console.error(
    `skipped without a listed reason: ${test}. Run it, or add it to scripts/allowed-skips.json with the reason it may not run.`,
  );
}
console.log(`jest: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
// For reports (`pnpm test:resilience`): what this run did, in one small file.
mkdirSync("test-artifacts", { recursive: true });
writeFileSync(
  "test-artifacts/test-summary.json",
  `${JSON.stringify({ args, ...totals, unlistedSkips, crashed, leaked, finished_at: new Date().toISOString() }, null, 2)}\n`,
);
const ran = totals.passed + totals.failed > 0;
if (!ran) console.error("no test ran");
const failed = totals.failed > 0 || totals.suitesFailed > 0 || unlistedSkips.length > 0;
process.exit(failed || crashed || leaked || !ran ? 1 : 0);
