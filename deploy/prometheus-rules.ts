// Turns k8s/monitoring's PromQL into plain Prometheus rules files, the form promtool checks, so one
// source serves both the cluster and the offline checks (deploy/validate.sh):
//   - the PrometheusRule (the operator's wrapping of rule groups): its groups as they are;
//   - the Grafana dashboard: each panel's query as a recording rule, so a query that does not
//     parse fails `promtool check rules`;
//   - the KEDA ScaledObjects of a rendered k8s/base or overlay: each prometheus trigger's query as
//     the recording rule keda:<ScaledObject, "_" for "-">:trigger_<index>, which
//     deploy/keda-queries.test.yaml runs against made-up series (`promtool test rules`).
//
//   node --import tsx deploy/prometheus-rules.ts alerts <prometheus-rule.yaml> <rules.yaml>
//   node --import tsx deploy/prometheus-rules.ts dashboard <grafana-dashboard.json> <rules.yaml>
//   node --import tsx deploy/prometheus-rules.ts keda <rendered.yaml> <rules.yaml>

import { readFileSync, writeFileSync } from "node:fs";
import { parse, parseAllDocuments, stringify } from "yaml";

const [mode, from, to] = process.argv.slice(2);
if ((mode !== "alerts" && mode !== "dashboard" && mode !== "keda") || !from || !to) {
  throw new Error("usage: prometheus-rules.ts alerts|dashboard|keda <from> <rules.yaml>");
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

function kedaGroups(file: string): unknown[] {
  interface ScaledObject {
    kind?: string;
    metadata?: { name?: string };
    spec?: { triggers?: { type?: string; metadata?: { query?: string } }[] };
  }
  const docs = parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS() as ScaledObject | null);
  const rules = docs
    .filter((o): o is ScaledObject => o?.kind === "ScaledObject")
    .flatMap((o) =>
      (o.spec?.triggers ?? []).flatMap((trigger, i) => {
        if (trigger.type !== "prometheus") return [];
        const name = `keda:${(o.metadata?.name ?? "").replace(/-/g, "_")}:trigger_${i}`;
        if (!trigger.metadata?.query) throw new Error(`${file}: ${name} has no query`);
        return [{ record: name, expr: trigger.metadata.query }];
      }),
    );
  if (rules.length === 0) throw new Error(`${file} has no ScaledObject with a prometheus trigger`);
  return [{ name: "keda", rules }];
}

const groups = { alerts: alertGroups, dashboard: dashboardGroups, keda: kedaGroups }[mode](from);
writeFileSync(to, stringify({ groups }));
