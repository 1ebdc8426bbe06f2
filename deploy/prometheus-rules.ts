// Turns k8s/monitoring's PromQL into plain Prometheus rules files, the form promtool checks, so one
// source serves both the cluster and the offline checks (deploy/validate.sh):
//   - the PrometheusRule (the operator's wrapping of rule groups): its groups as they are;
//   - the Grafana dashboard: each panel's query as a recording rule, so a query that does not
//     parse fails `promtool check rules`.
//
//   node --import tsx deploy/prometheus-rules.ts alerts <prometheus-rule.yaml> <rules.yaml>
//   node --import tsx deploy/prometheus-rules.ts dashboard <grafana-dashboard.json> <rules.yaml>

import { readFileSync, writeFileSync } from "node:fs";
import { parse, stringify } from "yaml";

const [mode, from, to] = process.argv.slice(2);
if ((mode !== "alerts" && mode !== "dashboard") || !from || !to) {
  throw new Error("usage: prometheus-rules.ts alerts|dashboard <from> <rules.yaml>");
}

function alertGroups(file: string): unknown[] {
  const rule = parse(readFileSync(file, "utf8")) as { kind?: string; spec?: { groups?: unknown[] } };
  if (rule.kind !== "PrometheusRule" || !Array.isArray(rule.spec?.groups)) {
    throw new Error(`${file} is not a PrometheusRule with spec.groups`);
  }
  return rule.spec.groups;
}

function dashboardGroups(file: string): unknown[] {
  const dashboard = JSON.parse(readFileSync(file, "utf8")) as {
    panels?: { title?: string; targets?: { expr?: string }[] }[];
  };
  const rules = (dashboard.panels ?? []).flatMap((panel, i) =>
    (panel.targets ?? []).map((target, j) => {
      if (!target.expr) throw new Error(`${file}: panel "${panel.title ?? i}" has a target without a query`);
      return { record: `dashboard:panel_${i + 1}_${j + 1}`, expr: target.expr };
    }),
  );
  if (rules.length === 0) throw new Error(`${file} has no panel queries`);
  return [{ name: "dashboard", rules }];
}

writeFileSync(to, stringify({ groups: mode === "alerts" ? alertGroups(from) : dashboardGroups(from) }));
