/**
 * Where each section of a bench report comes from. A partial run (`pnpm bench --only pdf`) keeps
 * the other sections of the last report, so one report holds figures from several runs; each
 * section records the run that measured it (date, commit, uncommitted changes), and only figures
 * measured in this run are judged against their targets. Pure: no I/O, no benchmark code, so
 * that it can be tested on its own (packages/testing/test/bench-provenance.test.ts).
 */
import type { Section, SectionOrigin, Target } from "../harness/targets.ts";
import type { Report } from "./report.ts";

export const SECTIONS = [
  "search",
  "ai",
  "pdf",
  "ocr",
  "media",
  "split",
  "quality",
  "documents",
  "documentsQuality",
] as const satisfies readonly Section[];

const UNCOMMITTED = " (with uncommitted changes)";

/** The commit and tree state of a run, from its `machine.commit` ("abc1234 (with uncommitted changes)"). */
export function commitOf(machineCommit: string | undefined): { commit: string; dirty: boolean | null } {
  if (machineCommit === undefined || machineCommit === "" || machineCommit === "unknown")
    return { commit: "unknown", dirty: null };
  return machineCommit.endsWith(UNCOMMITTED)
    ? { commit: machineCommit.slice(0, -UNCOMMITTED.length), dirty: true }
    : { commit: machineCommit, dirty: false };
}

const present = (value: unknown) =>
  !(value === undefined || value === null || (Array.isArray(value) && value.length === 0));

/** Whether a report holds figures of a section (ai answers belong to the ai section). */
export function hasFigures(r: Partial<Report>, section: Section): boolean {
  return present(r[section]) || (section === "ai" && present(r.aiAnswers));
}

/** The run that measured a section of an earlier report, for reports written before `sections`. */
function originIn(previous: Partial<Report>, section: Section): SectionOrigin {
  const recorded = previous.sections?.[section];
  if (recorded) return { ...recorded, thisRun: false };
  const keptDate = previous.carriedOver?.[section];
  if (keptDate !== undefined) return { date: keptDate, commit: "unknown", dirty: null, thisRun: false };
  return { date: previous.date ?? "unknown", ...commitOf(previous.machine?.commit), thisRun: false };
}

/**
 * The report to write: this run's sections, recorded as measured now at this commit, and, when
 * `previous` (the last latest.json) is given, the sections this run did not run taken from it,
 * each with the date and commit it was measured at. A section that ran and crashed is not taken
 * from the previous report: a crash leaves the section empty, not stale.
 */
export function withOrigins(r: Report, ran: readonly Section[], previous: Partial<Report> | null): Report {
  const sections: Partial<Record<Section, SectionOrigin>> = {};
  const now: SectionOrigin = { date: r.date, ...commitOf(r.machine.commit), thisRun: true };
  for (const section of SECTIONS)
    if (ran.includes(section) && hasFigures(r, section)) sections[section] = now;
  const merged: Report = { ...r, options: { ...r.options } };
  const kept: Partial<Record<Section, string>> = {};
  for (const section of previous ? SECTIONS : []) {
    if (ran.includes(section) || !previous || !hasFigures(previous, section)) continue;
    if (present(previous[section])) {
      (merged as unknown as Record<string, unknown>)[section] = previous[section];
      (merged.options as unknown as Record<string, unknown>)[section] = previous.options?.[section] ?? null;
    }
    // ai answers run with the ai section, and are kept with it.
    if (section === "ai" && previous.aiAnswers) {
      merged.aiAnswers = previous.aiAnswers;
      merged.options.aiAnswers = previous.options?.aiAnswers ?? null;
    }
    const origin = originIn(previous, section);
    sections[section] = origin;
    kept[section] = origin.date;
  }
  const { carriedOver: _dropped, ...rest } = merged;
  return Object.keys(kept).length === 0 ? { ...rest, sections } : { ...rest, sections, carriedOver: kept };
}

/** The targets with a verdict only for figures measured in this run; the others keep their run's origin. */
export function judgeTargets(targets: readonly Target[], sections: Report["sections"] | undefined): Target[] {
  return targets.map((t) => {
    const origin = t.section === undefined ? undefined : sections?.[t.section];
    return origin && !origin.thisRun ? { ...t, pass: null, earlierRun: origin } : t;
  });
}

/** "measured 2026-11-23T14:39:05.640Z at 3a5c3bd with uncommitted changes" */
export function describeOrigin(o: SectionOrigin): string {
  const commit =
    o.commit === "unknown"
      ? "an unrecorded commit"
      : `${o.commit}${o.dirty === true ? " with uncommitted changes" : ""}`;
  return `measured ${o.date} at ${commit}`;
}

export const notMeasuredHere = (o: SectionOrigin) => `not measured in this run (${describeOrigin(o)})`;

/** A section's heading, saying so when its figures come from an earlier run. */
export function heading(title: string, origin: SectionOrigin | undefined): string {
  return origin && !origin.thisRun ? `${title} — ${notMeasuredHere(origin)}` : title;
}

/** A rendered section with its first `## ` heading marked when the section comes from an earlier run. */
export function markSection(lines: readonly string[], origin: SectionOrigin | undefined): string[] {
  const at = lines.findIndex((line) => line.startsWith("## "));
  return lines.map((line, i) => (i === at ? heading(line, origin) : line));
}

/** The report's note on a partial run: what it measured, and where the other sections come from. */
export function partialRunNote(r: Report): string | null {
  const entries = SECTIONS.flatMap((s) => {
    const o = r.sections?.[s];
    return o ? [[s, o] as const] : [];
  });
  const earlier = entries.filter(([, o]) => !o.thisRun);
  if (earlier.length === 0) return null;
  const now = entries.filter(([, o]) => o.thisRun).map(([s]) => s);
  return (
    `- This run measured only part (${now.length > 0 ? now.join(", ") : "nothing"}); the other sections ` +
    `were not measured in this run and come from earlier runs: ${earlier
      .map(([s, o]) => `${s} (${describeOrigin(o)})`)
      .join(", ")}.`
  );
}

const verdict = (pass: boolean | null) => (pass === null ? "not measured" : pass ? "✅ pass" : "❌ miss");

/**
 * The report's target tables: the judged one (this run's figures, and targets nothing measured),
 * and the targets whose figures come from an earlier run, without a verdict.
 */
export function targetRows(targets: readonly Target[]): { judged: string[][]; earlier: string[][] } {
  return {
    judged: targets.filter((t) => !t.earlierRun).map((t) => [t.name, t.goal, t.measured, verdict(t.pass)]),
    earlier: targets.flatMap((t) =>
      t.earlierRun ? [[t.name, t.goal, t.measured, notMeasuredHere(t.earlierRun)]] : [],
    ),
  };
}

/** The targets as `pnpm bench` prints them after its summary. */
export function targetSummaryLines(targets: readonly Target[]): string[] {
  const judged = targets.filter((t) => !t.earlierRun);
  const earlier = targets.filter((t) => t.earlierRun);
  return [
    ...judged.map(
      (t) =>
        `  target ${t.name} ${t.goal}: ${t.measured} -> ${t.pass === null ? "not measured" : t.pass ? "pass" : "MISS"}`,
    ),
    ...(earlier.length > 0 ? ["  from an earlier run, not measured in this run (no verdict):"] : []),
    ...earlier.map((t) => `    ${t.name} ${t.goal}: ${t.measured} (${describeOrigin(t.earlierRun!)})`),
  ];
}
