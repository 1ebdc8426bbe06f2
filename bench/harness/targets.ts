// A report's sections and the targets judged on their figures. It sits below both the benchmarks
// (ai/ai-answers-report.ts judges its own targets) and the report (reporting/), so that each can
// import it without importing the other.

export type Section =
  "search" | "ai" | "pdf" | "ocr" | "media" | "split" | "quality" | "documents" | "documentsQuality";

/** The run that measured a section's figures. */
export interface SectionOrigin {
  /** When: the date of that run (ISO 8601), or what an older report recorded. */
  date: string;
  /** `git rev-parse --short HEAD` in that run; "unknown" when it was not recorded. */
  commit: string;
  /** Whether that run's working tree had uncommitted changes; null when not recorded. */
  dirty: boolean | null;
  /** true: measured by the run that wrote the report; false: carried over from an earlier run. */
  thisRun: boolean;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  /** null when the benchmark that measures it did not run or crashed, or its figure is from an earlier run. */
  pass: boolean | null;
  /** The report section whose figures it is judged on. */
  section?: Section;
  /** Set when the figure was not measured in this run: the run that measured it (no verdict then). */
  earlierRun?: SectionOrigin;
}
