// A row of the search tables: one query class's latency, in the all-in-one section and the split
// one (through the gateway).
import { fmt } from "../harness/report-format.ts";
import type { ClassResult } from "./search-latency.ts";

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
