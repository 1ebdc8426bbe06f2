// Writes the rule groups of the PrometheusRule in k8s/monitoring (the operator's wrapping) as a
// plain Prometheus rules file, the form promtool checks and tests: one source for both.
//
//   node --import tsx deploy/prometheus-rules.ts <prometheus-rule.yaml> <rules.yaml>

import { readFileSync, writeFileSync } from "node:fs";
import { parse, stringify } from "yaml";

const [from, to] = process.argv.slice(2);
if (!from || !to) throw new Error("usage: prometheus-rules.ts <prometheus-rule.yaml> <rules.yaml>");
const rule = parse(readFileSync(from, "utf8")) as { kind?: string; spec?: { groups?: unknown[] } };
if (rule.kind !== "PrometheusRule" || !Array.isArray(rule.spec?.groups)) {
  throw new Error(`${from} is not a PrometheusRule with spec.groups`);
}
writeFileSync(to, stringify({ groups: rule.spec.groups }));
