// Staying up through disruptions: a PodDisruptionBudget for every Deployment, and its pods spread
// over zones and nodes.
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import { matches } from "./kubernetes-rendering.ts";
import { SPREAD_TOPOLOGY_KEYS } from "./locus.ts";
import { at, list, obj, show } from "./yaml.ts";

/**
 * Every Deployment has exactly one PodDisruptionBudget, which lets a drain through even at one
 * replica; its pods spread over SPREAD_TOPOLOGY_KEYS, counted among its own pods only.
 */
export function checkAvailability(rendering: Rendering, workloads: Workload[]): void {
  const { problems, where, ofKind } = rendering;
  const budgets = ofKind("PodDisruptionBudget");
  for (const p of budgets) {
    const selected = workloads.filter((w) => matches(at(p, "spec", "selector", "matchLabels"), w.podLabels));
    if (selected.length !== 1)
      problems.push(`${where(p)}: its selector matches ${selected.length} Deployments`);
    // minAvailable at the replica count (or a Deployment an autoscaler has scaled in to it) would
    // refuse every eviction, and a drain would wait for ever.
    if (at(p, "spec", "minAvailable") !== undefined)
      problems.push(
        `${where(p)}: set maxUnavailable, not minAvailable: at one replica it blocks every drain`,
      );
    const max = at(p, "spec", "maxUnavailable");
    if (!(Number(max) >= 1 || /^[1-9][0-9]*%$/.test(show(max))))
      problems.push(`${where(p)}: maxUnavailable must let at least one pod go, got ${show(max) || "none"}`);
  }
  for (const w of workloads) {
    const covering = budgets.filter((p) => matches(at(p, "spec", "selector", "matchLabels"), w.podLabels));
    if (covering.length !== 1) {
      problems.push(
        `${where(w.doc)}: ${covering.length} PodDisruptionBudgets select its pods, expected one ` +
          `(k8s/base/disruption-budgets.yaml): without one a drain may evict every replica at once`,
      );
    }

    const constraints = list(at(w.podSpec, "topologySpreadConstraints")).map(obj);
    for (const key of SPREAD_TOPOLOGY_KEYS) {
      const c = constraints.find((x) => x.topologyKey === key);
      if (!c) {
        problems.push(`${where(w.doc)}: its pods do not spread over ${key} (topologySpreadConstraints)`);
        continue;
      }
      if (c.whenUnsatisfiable !== "ScheduleAnyway")
        problems.push(
          `${where(w.doc)}: the spread over ${key} must be whenUnsatisfiable: ScheduleAnyway, or a ` +
            `cluster without enough ${key === "kubernetes.io/hostname" ? "nodes" : "zones"} leaves pods pending`,
        );
      // The pods the constraint counts, as the scheduler sees them for one of this Deployment's
      // pods: its labelSelector, narrowed by the pod's own values of matchLabelKeys.
      const selector = {
        ...obj(at(c, "labelSelector", "matchLabels")),
        ...Object.fromEntries(list(c.matchLabelKeys).map((k) => [show(k), w.podLabels[show(k)]])),
      };
      const counted = workloads.filter((other) => matches(selector, other.podLabels));
      if (!counted.includes(w) || counted.length !== 1) {
        problems.push(
          `${where(w.doc)}: its spread over ${key} counts the pods of ` +
            `${counted.map((o) => o.name).join(", ") || "no Deployment"}, not its own alone`,
        );
      }
    }
  }
}
