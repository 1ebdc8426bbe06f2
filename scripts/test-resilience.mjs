// `pnpm test:resilience`: the resilience suites alone (hostile HTTP, hostile files, access, logs,
// load and soak, faults in the split shape), a dependency audit, and the report of their figures:
// docs/resilience/latest.md (read by people, linked from the README) and latest.json. The suites
// also run in `pnpm test` (and so in CI), but for the soak suites (*.soak.test.ts, too long for
// every run); this command exists to run those, to measure and to write the report.
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
  "apps/locus/test/dashboard.e2e",
  "apps/locus/test/split.e2e",
  "apps/locus/test/api.e2e",
  "services/files/test/stall-sweep",
  "services/indexer/test/passage-indexer",
  "packages/extraction-job/test",
  "packages/media-reader/test/media-input",
  "packages/http/test",
  "packages/runtime/test",
  "apps/locus/test/split-load.soak",
  "apps/locus/test/split-outbox.faults",
  "apps/locus/test/split.faults",
  "apps/locus/test/busy-machine.soak",
  "packages/pdf-reader/test/inflation-guard",
  "packages/testing/test/log-scan",
];
const ARTIFACTS = "test-artifacts/resilience";
const OUT = "docs/resilience";

rmSync(ARTIFACTS, { recursive: true, force: true });
// The fuzzer sends 10,000 requests here (3,000 in every `pnpm test`), and the split shape's soak
// lasts 120 s (45 s in every `pnpm test`); larger figures may be given.
const tests = spawnSync(process.execPath, ["scripts/test.mjs", "--soak", ...SUITES], {
  stdio: "inherit",
  env: {
    ...process.env,
    LOCUS_FUZZ_REQUESTS: process.env.LOCUS_FUZZ_REQUESTS ?? "10000",
    LOCUS_SOAK_SECONDS: process.env.LOCUS_SOAK_SECONDS ?? "120",
  },
});
const read = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null);
const summary = read("test-artifacts/test-summary.json");
const fuzz = read(`${ARTIFACTS}/http-fuzz.json`);
const hostile = read(`${ARTIFACTS}/hostile-files.json`);
const access = read(`${ARTIFACTS}/access-matrix.json`);
const logs = read(`${ARTIFACTS}/log-scan.json`);
// The load suite (soak, rate limits, faults under load) and the outbox suite write apart; the
// report reads them as one.
const outbox = read(`${ARTIFACTS}/split-outbox.json`);
const load = (() => {
  const soak = read(`${ARTIFACTS}/split-load.json`);
  return soak || outbox ? { ...soak, ...outbox } : null;
})();
const busy = read(`${ARTIFACTS}/busy-machine-burst.json`);
const audited = (name) => read(`${ARTIFACTS}/audit-${name}.json`);

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
  audit_findings: Object.fromEntries(
    [
      "signin-burst",
      "signin-flood",
      "upload-broke-off-all-in-one",
      "upload-broke-off-split",
      "media-references",
      "document-links",
      "service-tokens",
      "deleted-mid-processing",
      "stall-sweep",
      "dashboard-burst",
    ].map((n) => [n, audited(n)]),
  ),
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
    ...(load.outbox
      ? [
          "",
          `An upload stored but never announced (its files service killed in between) was published from the outbox and ready ${load.outbox.orphaned_upload_ready_s} s after it was stored (its request held ${load.outbox.hold_s} s, as for an upload whose request had not completed).`,
        ]
      : []),
    ...(load.files_killed_after_200
      ? [
          "",
          `The files service killed right after an upload's 200 (${load.files_killed_after_200.rounds} times): each upload ready ${load.files_killed_after_200.ready_after_back_s.join(", ")} s after the service answered again, still ready 5 s later, extracted once.`,
        ]
      : []),
    ...(load.stall_sweep
      ? [
          "",
          `A record with no processing request at all (the last resort) was finished by the stall sweep ${load.stall_sweep.stranded_upload_ready_s} s after it was left (LOCUS_STALLED_AFTER_S=${load.stall_sweep.stall_after_s} in the suite; 600 by default).`,
        ]
      : []),
  );
}
if (busy) {
  lines.push(
    "",
    "## A busy machine (all-in-one shape)",
    "",
    `A burst of ${busy.files} files (a scan needing OCR, an office document, two real human recordings, a talk on video) uploaded at once on ${busy.cores} cores while ${busy.neighbours} busy loops, each in a session of its own, held them: every file ready after ${busy.all_ready_s} s, and every recording whole (${Object.entries(
      busy.recordings_whole,
    )
      .map(([name, r]) => `${name}: ${r.words} words, as on an idle machine`)
      .join("; ")}).`,
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
{
  // Each finding of the security and reliability audit (issue 15), with the figure its test left.
  const f = figures.audit_findings;
  const row = (finding, figure) => `| ${finding} | ${figure ?? "not measured"} |`;
  lines.push(
    "",
    "## Audit findings held (issue 15)",
    "",
    "| Finding | Held, as measured |",
    "| --- | --- |",
    row(
      "Sign-in guesses sent at once are counted before scrypt",
      f["signin-burst"] &&
        `${f["signin-burst"].guesses} wrong passwords at once for one account: ${f["signin-burst"].checked} checked, ${f["signin-burst"].refused_429} refused with 429`,
    ),
    row(
      "Password hashing is bounded",
      f["signin-flood"] &&
        `${f["signin-flood"].requests} sign-ins at once from as many addresses: ${f["signin-flood"].checked} checked, ${f["signin-flood"].busy_503} answered 503 with Retry-After`,
    ),
    row(
      "An upload whose request breaks off is never processed (its quota given back)",
      ["all-in-one", "split"]
        .filter((shape) => f[`upload-broke-off-${shape}`])
        .map(
          (shape) =>
            `${shape}: held ${f[`upload-broke-off-${shape}`].held_s} s after its file part, then cut: not extracted, not listed`,
        )
        .join("; ") || null,
    ),
    row(
      "ffmpeg is told the container and may open local files only; lists of other files fail",
      f["media-references"] &&
        `${f["media-references"].lists} playlists and concat lists dressed as MP3/WebM: ${f["media-references"].failed} failed, ${f["media-references"].requests_to_named_url} requests to the URL they named`,
    ),
    row(
      "LibreOffice converts office documents without network; what they link is never fetched (issue 23)",
      f["document-links"] &&
        `${f["document-links"].documents} documents linking a picture (and a template) at a loopback URL: ${f["document-links"].ready} ready, ${f["document-links"].requests_to_linked_url} requests to it`,
    ),
    row(
      "Service tokens are bound to one request and used once; the user comes from the token only",
      f["service-tokens"] &&
        `refused: ${f["service-tokens"].refused.join(", ")}; accepted once each: ${f["service-tokens"].accepted}`,
    ),
    row(
      "A file deleted while it is extracted or indexed leaves nothing",
      f["deleted-mid-processing"] &&
        `${f["deleted-mid-processing"].files} files deleted at different moments: ${f["deleted-mid-processing"].objects_left} S3 objects and ${f["deleted-mid-processing"].passages_left} passages left`,
    ),
    row(
      "The stall sweep claims each file once across files processes",
      f["stall-sweep"] &&
        `${f["stall-sweep"].stalled_files} stalled files, ${f["stall-sweep"].sweepers} processes sweeping ${f["stall-sweep"].sweeps} times at once: ${f["stall-sweep"].published} publications`,
    ),
    row(
      "The dashboard loses no upload under its own rate limit",
      f["dashboard-burst"] &&
        `${f["dashboard-burst"].files} files dropped at once on the free plan: ${f["dashboard-burst"].uploaded_and_ready} uploaded and ready, ${f["dashboard-burst"].refused_429_and_retried} refusals waited out`,
    ),
    row(
      "Redis away: gateways stay ready and serve",
      load?.faults?.recoveries?.some((r) => /Redis/.test(r.fault))
        ? "see Recovery (split shape, under load) above"
        : null,
    ),
    row(
      "No file fails because of a fault",
      load?.faults ? `${load.faults.files_failed} failed of ${load.faults.files_accepted}` : null,
    ),
    row(
      "Placeholder secrets refused; NetworkPolicy; preview headers; /docs and dashboard assets",
      "checked by config.test, deploy/validate.sh and api-suite on every run",
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
