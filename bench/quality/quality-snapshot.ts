/**
 * Keeps the retrieval-quality figures of a run under a name, and compares a later run with them:
 *
 *   node --import tsx bench/quality/quality-snapshot.ts save before     # bench/report/quality-before.json and .md
 *   node --import tsx bench/quality/quality-snapshot.ts compare before  # latest.json's figures against them
 *
 * Both read bench/report/latest.json, as `pnpm bench --only quality` leaves it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { QualityBenchResult, QualityRow } from "./quality.ts";
import { renderQuality } from "./quality-report.ts";
import { REPORT_DIR } from "../harness/paths.ts";
import type { Report } from "../reporting/report.ts";

interface Snapshot {
  name: string;
  date: string;
  commit: string;
  loadAverage: Report["machine"]["loadAverage"];
  limit: number | null;
  quality: QualityBenchResult;
}

function latest(): Snapshot {
  const r = JSON.parse(readFileSync(join(REPORT_DIR, "latest.json"), "utf8")) as Report;
  if (!r.quality)
    throw new Error("bench/report/latest.json has no quality section: run pnpm bench --only quality");
  const origin = r.sections?.quality;
  const date = origin?.date ?? r.carriedOver?.quality ?? r.date;
  return {
    name: "latest",
    date,
    commit: origin
      ? `${origin.commit}${origin.dirty === true ? " (with uncommitted changes)" : ""}`
      : r.carriedOver?.quality
        ? "(carried over)"
        : r.machine.commit,
    loadAverage: r.machine.loadAverage,
    limit: r.options.quality?.limit ?? null,
    quality: r.quality,
  };
}

const key = (r: QualityRow) => `${r.kind} ${r.category} ${r.mode}`;
const pct = (n: number, of: number) => (of === 0 ? "–" : `${Math.round((n / of) * 100)}%`);
const delta = (a: number, b: number, digits = 0) => {
  const d = b - a;
  const s = digits === 0 ? String(Math.round(d)) : d.toFixed(digits);
  return d > 0 ? `+${s}` : d < 0 ? s : "=";
};

function compare(before: Snapshot, after: Snapshot): string[] {
  const out = [
    `Retrieval quality: ${after.date} (${after.commit}) against "${before.name}", ${before.date} (${before.commit}).`,
    "",
    "| kind | category | mode | queries | hit@1 | hit@5 | MRR | found | away median | width median |",
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const old = new Map(before.quality.rows.map((r) => [key(r), r]));
  for (const r of after.quality.rows) {
    const b = old.get(key(r));
    const cell = (now: string, was: string | undefined) =>
      was === undefined || was === now ? now : `${was} → ${now}`;
    out.push(
      `| ${r.kind} | ${r.category} | ${r.mode} | ${r.queries} | ${cell(pct(r.hitAt1, r.queries), b && pct(b.hitAt1, b.queries))} | ` +
        `${cell(pct(r.hitAt5, r.queries), b && pct(b.hitAt5, b.queries))} | ${cell(String(r.mrr), b && String(b.mrr))} | ` +
        `${cell(pct(r.found, r.queries), b && pct(b.found, b.queries))} | ${cell(String(r.away.median), b && String(b.away.median))} | ` +
        `${cell(String(r.span.median), b && String(b.span.median))} |`,
    );
  }
  const was = new Map(before.quality.outcomes.map((o) => [`${o.id} ${o.mode}`, o.rank]));
  let better = 0;
  let worse = 0;
  for (const o of after.quality.outcomes) {
    const a = was.get(`${o.id} ${o.mode}`);
    if (a === undefined) continue;
    const rank = (x: number | null) => x ?? Number.POSITIVE_INFINITY;
    if (rank(o.rank) < rank(a)) better++;
    if (rank(o.rank) > rank(a)) worse++;
  }
  out.push("", `Queries ranked better: ${better}, worse: ${worse} (${delta(worse, better)} net).`);
  return out;
}

const [command, name] = process.argv.slice(2).filter((a) => a !== "--");
if (!name || !/^[a-z0-9-]+$/.test(name) || (command !== "save" && command !== "compare")) {
  process.stderr.write("usage: quality-snapshot.ts save|compare NAME (lowercase letters, digits, -)\n");
  process.exit(2);
}
const path = (ext: string) => join(REPORT_DIR, `quality-${name}.${ext}`);
if (command === "save") {
  const s = { ...latest(), name };
  writeFileSync(path("json"), `${JSON.stringify(s, null, 2)}\n`);
  const md = [
    `# Retrieval quality: "${name}"`,
    "",
    `- Measured ${s.date} on commit ${s.commit}; 1-minute load average ${s.loadAverage.start} at the start of the run, ${s.loadAverage.end} at the end.`,
    `- Saved from bench/report/latest.json by \`node --import tsx bench/quality/quality-snapshot.ts save ${name}\`; compare a later run with \`... compare ${name}\`.`,
    "",
    ...renderQuality(s.quality, s.limit),
  ];
  writeFileSync(path("md"), `${md.join("\n").trimEnd()}\n`);
  console.log(`wrote ${path("json")}\n      ${path("md")}`);
} else {
  const before = JSON.parse(readFileSync(path("json"), "utf8")) as Snapshot;
  console.log(compare(before, latest()).join("\n"));
}
