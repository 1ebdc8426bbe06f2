// Writes the report: this run's figures with the sections a partial run keeps from the last
// report (provenance.ts), the targets judged on them (report-targets.ts), and the markdown
// (report-markdown.ts), as bench/report/latest.md and latest.json.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPORT_DIR } from "../harness/paths.ts";
import type { Section, Target } from "../harness/targets.ts";
import { judgeTargets, withOrigins } from "./provenance.ts";
import type { Report } from "./report.ts";
import { renderMarkdown } from "./report-markdown.ts";
import { evaluateTargets } from "./report-targets.ts";

/**
 * A partial run (`--only x`) keeps the other sections of the last report instead of dropping them,
 * and says so: the report then holds figures from several runs, each section with its own options
 * and the date and commit it was measured at (provenance.ts). A full run (`ran` holding every
 * section) keeps nothing.
 */
export function carryOver(r: Report, ran: readonly Section[]): Report {
  let previous: Partial<Report> | null;
  try {
    previous = JSON.parse(readFileSync(join(REPORT_DIR, "latest.json"), "utf8")) as Partial<Report>;
  } catch {
    previous = null;
  }
  return withOrigins(r, ran, previous);
}

/** The targets on a report's figures, judged only where the figure was measured in this run. */
export function reportTargets(r: Report): Target[] {
  return judgeTargets(
    evaluateTargets(r.search, r.pdf, r.ocr, r.media, r.ai, r.aiAnswers ?? null, r.split),
    r.sections,
  );
}

export function writeReport(r: Report): { md: string; json: string } {
  mkdirSync(REPORT_DIR, { recursive: true });
  const md = join(REPORT_DIR, "latest.md");
  const json = join(REPORT_DIR, "latest.json");
  // Written beside and renamed, so an interrupted run never leaves half a report.
  const write = (path: string, text: string) => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };
  write(md, renderMarkdown(r));
  write(json, `${JSON.stringify(r, null, 2)}\n`);
  return { md, json };
}
