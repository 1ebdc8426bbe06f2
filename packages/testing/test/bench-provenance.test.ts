import {
  judgeTargets,
  markSection,
  partialRunNote,
  targetRows,
  targetSummaryLines,
  withOrigins,
} from "../../../bench/reporting/provenance.ts";
import type { Report } from "../../../bench/reporting/report.ts";
import type { Target } from "../../../bench/harness/targets.ts";

/**
 * `pnpm bench --only pdf` keeps the other sections of the last report (bench/reporting/provenance.ts): they
 * must say when and at which commit they were measured, and their targets get no verdict.
 */
const figures = (what: string) => ({ what }) as never;

function report(over: Partial<Report>): Report {
  return {
    date: "2026-11-25T14:00:00.000Z",
    durationSeconds: 120,
    machine: {
      nproc: 2,
      totalMemoryGiB: 8,
      cpuModel: "test",
      node: "v20",
      platform: "linux",
      commit: "abc1234 (with uncommitted changes)",
      loadAverage: { start: 1, end: 1 },
    },
    options: { search: null, ai: null, pdf: null, ocr: null, media: null, split: null },
    targets: [],
    search: [],
    ai: null,
    pdf: null,
    ocr: null,
    media: null,
    split: null,
    errors: [],
    ...over,
  };
}

// The last latest.json: a full run at another commit, clean tree.
const previous = report({
  date: "2026-11-20T09:00:00.000Z",
  machine: { ...report({}).machine, commit: "0ld0001" },
  pdf: figures("old pdf"),
  media: figures("old media"),
  options: { ...report({}).options, pdf: figures("old pdf options"), media: figures("old media options") },
  sections: {
    pdf: { date: "2026-11-20T09:00:00.000Z", commit: "0ld0001", dirty: false, thisRun: true },
    media: { date: "2026-11-20T09:00:00.000Z", commit: "0ld0001", dirty: false, thisRun: true },
  },
});

// This run: --only pdf.
const merged = withOrigins(report({ pdf: figures("new pdf") }), ["pdf"], previous);

const targets: Target[] = [
  {
    name: "Text PDF ingestion throughput",
    goal: "≥ 100 pages/s",
    measured: "42 pages/s",
    pass: false,
    section: "pdf",
  },
  { name: "Speech real-time factor", goal: "≤ 0.5", measured: "0.2", pass: true, section: "media" },
  { name: "OCR throughput", goal: "≥ 1 page/s", measured: "not measured", pass: null, section: "ocr" },
];
const judged = judgeTargets(targets, merged.sections);

it("records when and at which commit each section was measured, and keeps this run's figures", () => {
  expect(merged.pdf).toEqual({ what: "new pdf" });
  expect(merged.media).toEqual({ what: "old media" });
  expect(merged.options.media).toEqual({ what: "old media options" });
  expect(merged.sections).toEqual({
    pdf: { date: "2026-11-25T14:00:00.000Z", commit: "abc1234", dirty: true, thisRun: true },
    media: { date: "2026-11-20T09:00:00.000Z", commit: "0ld0001", dirty: false, thisRun: false },
  });
  // A second partial run keeps the carried section's own origin, not the run that carried it.
  const again = withOrigins(
    report({ date: "2026-11-26T08:00:00.000Z", machine: { ...previous.machine, commit: "new0002" } }),
    ["ocr"],
    merged,
  );
  expect(again.sections?.media).toEqual(merged.sections?.media);
  expect(again.sections?.pdf).toEqual({ ...merged.sections?.pdf, thisRun: false });
});

it("judges a target measured in this run", () => {
  expect(judged[0]).toEqual(targets[0]);
  const rows = targetRows(judged);
  expect(rows.judged).toContainEqual([
    "Text PDF ingestion throughput",
    "≥ 100 pages/s",
    "42 pages/s",
    "❌ miss",
  ]);
  expect(targetSummaryLines(judged)).toContain(
    "  target Text PDF ingestion throughput ≥ 100 pages/s: 42 pages/s -> MISS",
  );
  // A section that ran but measured nothing stays in the judged list, as not measured.
  expect(rows.judged).toContainEqual(["OCR throughput", "≥ 1 page/s", "not measured", "not measured"]);
});

it("marks a carried-over section and its targets, and does not judge them", () => {
  const speech = judged[1]!;
  expect(speech.pass).toBeNull();
  expect(speech.earlierRun).toEqual(merged.sections?.media);
  const rows = targetRows(judged);
  expect(rows.judged.map((r) => r[0])).not.toContain("Speech real-time factor");
  expect(rows.earlier).toEqual([
    [
      "Speech real-time factor",
      "≤ 0.5",
      "0.2",
      "not measured in this run (measured 2026-11-20T09:00:00.000Z at 0ld0001)",
    ],
  ]);
  const lines = targetSummaryLines(judged);
  expect(lines.filter((l) => l.includes("Speech"))).toEqual([
    "    Speech real-time factor ≤ 0.5: 0.2 (measured 2026-11-20T09:00:00.000Z at 0ld0001)",
  ]);
  expect(lines.join("\n")).toContain("from an earlier run, not measured in this run (no verdict)");
  expect(lines.some((l) => l.includes("Speech") && /pass|MISS/.test(l))).toBe(false);

  expect(markSection(["## Audio and video", "", "text"], merged.sections?.media)[0]).toBe(
    "## Audio and video — not measured in this run (measured 2026-11-20T09:00:00.000Z at 0ld0001)",
  );
  expect(markSection(["## PDF ingestion", ""], merged.sections?.pdf)[0]).toBe("## PDF ingestion");
  expect(partialRunNote(merged)).toBe(
    "- This run measured only part (pdf); the other sections were not measured in this run and come " +
      "from earlier runs: media (measured 2026-11-20T09:00:00.000Z at 0ld0001).",
  );
});

it("records a full run's sections as measured now, and reads the origin of reports from before", () => {
  const full = withOrigins(report({ pdf: figures("pdf") }), ["search", "pdf", "ocr"], null);
  expect(full.sections).toEqual({
    pdf: { date: "2026-11-25T14:00:00.000Z", commit: "abc1234", dirty: true, thisRun: true },
  });
  expect(full.carriedOver).toBeUndefined();
  expect(partialRunNote(full)).toBeNull();
  // An older latest.json: no `sections`, a carried-over date only, or the run's own commit.
  const { sections: _none, ...older } = previous;
  const fromOlder = withOrigins(report({}), ["search"], {
    ...older,
    carriedOver: { media: "2026-11-01T00:00:00.000Z" },
  });
  expect(fromOlder.sections?.media).toEqual({
    date: "2026-11-01T00:00:00.000Z",
    commit: "unknown",
    dirty: null,
    thisRun: false,
  });
  expect(fromOlder.sections?.pdf).toEqual({
    date: "2026-11-20T09:00:00.000Z",
    commit: "0ld0001",
    dirty: false,
    thisRun: false,
  });
});
