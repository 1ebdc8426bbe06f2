// The markdown table and number cells the bench report's renderers share.
import type { ClassResult } from "./search-latency.ts";

export const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((h, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
export const fmt = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "–" : String(v));
export const round2 = (v: number) => Math.round(v * 100) / 100;

export function classRow(name: string, c: ClassResult): (string | number)[] {
  const l = c.latencyMs;
  return [
    name,
    c.queries,
    fmt(l.p50),
    fmt(l.p95),
    fmt(l.p99),
    fmt(l.mean),
    fmt(l.max),
    fmt(c.serverMs?.p50),
    c.meanResults,
  ];
}
