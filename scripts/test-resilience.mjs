// `pnpm test:resilience`: the resilience suites alone (hostile HTTP, hostile files, access, logs,
// load and soak, faults in the split shape), a dependency audit, and the report of their figures:
// docs/resilience/latest.md (read by people, linked from the README) and latest.json. The suites
// also run in `pnpm test` (and so in CI); this command exists to measure and to write the report.
// Exits non-zero when a suite fails or the audit finds a high or critical advisory not explained
// in docs/resilience/audit-explained.json.
import { spawnSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const SUITES = [
  "apps/locus/test/http-fuzz",
  "apps/locus/test/access-matrix",
  "apps/locus/test/hostile-files",
  "apps/locus/test/hostile-pdf",
  "apps/locus/test/dashboard-api",
  "apps/locus/test/split-load.faults",
  "apps/locus/test/split.faults",
  "packages/extract-pdf/test/inflation-guard",
  "packages/testing/test/log-scan",
];
const ARTIFACTS = "test-artifacts/resilience";
const OUT = "docs/resilience";

rmSync(ARTIFACTS, { recursive: true, force: true });
const tests = spawnSync(process.execPath, ["scripts/test.mjs", ...SUITES], { stdio: "inherit" });
const read = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null);
const summary = read("test-artifacts/test-summary.json");
const fuzz = read(`${ARTIFACTS}/http-fuzz.json`);
const hostile = read(`${ARTIFACTS}/hostile-files.json`);
const access = read(`${ARTIFACTS}/access-matrix.json`);
const logs = read(`${ARTIFACTS}/log-scan.json`);
const load = read(`${ARTIFACTS}/split-load.json`);

// The audit asks the registry's advisory endpoint; where that cannot be reached, the report says
// so rather than claiming a clean bill.
const audit = (() => {
  const result = spawnSync("pnpm", ["audit", "--prod", "--json"], { encoding: "utf8", timeout: 120_000 });
  let body = null;
  try {
    body = JSON.parse(result.stdout);
  } catch {
    // not JSON: the endpoint did not answer
  }
  const vulnerabilities = body?.metadata?.vulnerabilities;
  if (!vulnerabilities) {
    const reason =
      body?.error?.message ??
      (`${result.stderr ?? ""}${result.stdout ?? ""}`.trim().split("\n")[0] || `exit ${result.status}`);
    return { ran: false, reason };
  }
  const explained = new Set((read(`${OUT}/audit-explained.json`) ?? []).map((e) => String(e.id)));
  const serious = Object.values(body.advisories ?? {}).filter((a) =>
    ["high", "critical"].includes(a.severity),
  );
  const unexplained = serious
    .filter((a) => !explained.has(String(a.github_advisory_id ?? a.id)))
    .map((a) => ({
      id: a.github_advisory_id ?? a.id,
      module: a.module_name,
      severity: a.severity,
      title: a.title,
    }));
  return { ran: true, vulnerabilities, unexplained };
})();

const machine = `${cpus().length} cores (${cpus()[0]?.model.trim() ?? "unknown"}), ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;
const figures = {
  measured_at: new Date().toISOString(),
  machine,
  tests: summary,
  requests_fuzzed: fuzz?.requests ?? null,
  files_attacked: hostile?.files_attacked ?? null,
  access_cases: access ? `${access.held}/${access.cases}` : null,
  log_lines_scanned: logs?.lines ?? null,
  secrets_in_logs: logs?.findings?.length ?? null,
  faults_injected: load?.faults?.faults_injected ?? null,
  files_lost: load ? (load.soak?.files_lost ?? 0) + (load.faults?.files_lost ?? 0) : null,
  duplicates: load ? (load.soak?.files_indexed_twice ?? 0) + (load.faults?.files_indexed_twice ?? 0) : null,
  audit,
  details: { fuzz, hostile, access, load },
};

const v = (x) => (x === null || x === undefined ? "not measured" : String(x));
const lines = [
  "# Resilience report",
  "",
  `Measured ${figures.measured_at.slice(0, 16).replace("T", " ")} UTC on ${machine}; written by \`pnpm test:resilience\`.`,
  `Tests: ${summary ? `${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped` : "no summary"}.`,
  "",
  "| Figure | Value |",
  "| --- | --- |",
  `| Requests fuzzed (every /openapi.json operation, plus malformed HTTP) | ${v(fuzz?.requests)}${fuzz ? `, none a 5xx, slowest ${fuzz.slowestMs} ms` : ""} |`,
  `| Files attacked | ${v(hostile?.files_attacked)}${hostile ? ` (${hostile.refused} refused, ${hostile.failed} failed with a reason, ${hostile.read_as_what_they_are} harmless and read as what they are); ${hostile.bystanders_ready} ordinary files in between all ready` : ""} |`,
  `| Access cases (operation × credential) held | ${v(figures.access_cases)} |`,
  `| Log lines scanned for keys, tokens, passwords | ${v(logs?.lines)}${logs ? ` from ${logs.files} processes; secrets found: ${logs.findings.length}` : ""} |`,
  `| Faults injected | ${v(figures.faults_injected)} |`,
  `| Files lost | ${v(figures.files_lost)} |`,
  `| Files indexed twice | ${v(figures.duplicates)} |`,
];
if (load?.soak) {
  const s = load.soak;
  lines.push(
    `| Soak | ${s.seconds} s, ${s.uploads} uploads, ${s.searches} searches over two gateways; upload p50/p95 ${s.upload_ms.p50}/${s.upload_ms.p95} ms, search p50/p95 ${s.search_ms.p50}/${s.search_ms.p95} ms; ${s.bucket_objects_stray} stray objects |`,
  );
}
if (load?.rate_limit) {
  const r = load.rate_limit;
  lines.push(
    `| Rate limit across ${r.gateways} gateways | ${r.accepted} accepted of ${r.expected} allowed (${r.limit_per_s}/s for ${r.seconds} s): ratio ${r.accepted_over_expected} |`,
  );
}
lines.push(
  `| Dependency audit | ${audit.ran ? `${JSON.stringify(audit.vulnerabilities)}; unexplained high/critical: ${audit.unexplained.length}` : `not run: ${audit.reason}`} |`,
);
if (load?.faults) {
  lines.push(
    "",
    "## Recovery (split shape, under load)",
    "",
    "`back` is the killed service answering /healthz again (the launcher restarts it after 1 s, as Kubernetes would); `probe` is a file uploaded right after the fault being ready.",
    "",
    "| Fault | Back (s) | Probe file ready (s) |",
    "| --- | --- | --- |",
    ...load.faults.recoveries.map(
      (r) => `| ${r.fault} | ${r.back_s ?? `outage ${r.outage_s}`} | ${r.probe_file_ready_s} |`,
    ),
    "",
    `Under load: ${load.faults.files_accepted} files accepted, ${load.faults.uploads_refused_during_faults} upload attempts refused during faults (and retried by the client), ${load.faults.files_failed} failed, ${load.faults.orphan_files} stored though their answer was lost (each must finish too).`,
    ...(load.stall_sweep
      ? [
          "",
          `An upload stored but never announced (its files service killed in between) was finished by the stall sweep ${load.stall_sweep.stranded_upload_ready_s} s after it was left (LOCUS_STALLED_AFTER_S=${load.stall_sweep.stall_after_s} in the suite; 600 by default).`,
        ]
      : []),
  );
}
if (load?.soak?.memory_mb) {
  lines.push(
    "",
    "## Memory during the soak (RSS, MB)",
    "",
    "| Process | Second quarter (median) | Last quarter (median) | Peak |",
    "| --- | --- | --- | --- |",
    ...Object.entries(load.soak.memory_mb).map(
      ([p, m]) => `| ${p} | ${m.warm_mb} | ${m.end_mb} | ${m.peak_mb} |`,
    ),
  );
}
if (hostile?.outcomes) {
  lines.push(
    "",
    "## Hostile files",
    "",
    "| Attack | Outcome | Code |",
    "| --- | --- | --- |",
    ...hostile.outcomes.map(
      (o) => `| ${o.attack} | ${o.final === "refused" ? `refused ${o.status}` : o.final} | ${o.code ?? ""} |`,
    ),
  );
}
mkdirSync(OUT, { recursive: true });
writeFileSync(`${OUT}/latest.md`, `${lines.join("\n")}\n`);
writeFileSync(`${OUT}/latest.json`, `${JSON.stringify(figures, null, 2)}\n`);
console.log(`resilience report: ${OUT}/latest.md`);

const auditFailed = audit.ran && audit.unexplained.length > 0;
if (auditFailed)
  console.error(`pnpm audit: ${audit.unexplained.length} high or critical advisories not explained`);
process.exit(tests.status !== 0 || auditFailed ? 1 : 0);
