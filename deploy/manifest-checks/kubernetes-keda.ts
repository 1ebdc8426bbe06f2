// KEDA beyond the queue's depth: the lag trigger (prometheus), scale-in behaviour, and the grace
// period that lets a pod taken away finish the longest recording or video allowed.
import { readFileSync } from "node:fs";
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import {
  HPA_DEFAULT_SCALE_DOWN_WINDOW_S,
  KEDA_SETTINGS,
  LAG_METRIC,
  mediaMaxDurationS,
  METRICS_SOURCE,
  SHUTDOWN_MARGIN_S,
  SHUTDOWN_SECONDS_PER_MEDIA_SECOND,
} from "./locus.ts";
import type { Obj } from "./yaml.ts";
import { at, isObj, list, obj, show } from "./yaml.ts";

/** The metadata KEDA's prometheus scaler reads (pkg/scalers/prometheus_scaler.go, its keda tags). */
const PROMETHEUS_METADATA = new Set([
  "serverAddress",
  "query",
  "queryParameters",
  "threshold",
  "activationThreshold",
  "namespace",
  "customHeaders",
  "ignoreNullValues",
  "unsafeSsl",
  "awsRegion",
  "timeout",
  "identityOwner",
  "authModes",
]);
/** A trigger's metricType: Utilization is for the cpu and memory scalers only. */
const METRIC_TYPES = ["AverageValue", "Value"];
const isNumber = (v: unknown) => typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v));

let declared: Set<string> | undefined;
/** Metric names declared in packages/metrics (the `name:` of each prom-client metric). */
export function declaredMetrics(): Set<string> {
  declared ??= new Set(
    [...readFileSync(METRICS_SOURCE, "utf8").matchAll(/name:\s*"(locus_[a-z0-9_]+)"/g)].map(
      (m) => m[1] ?? "",
    ),
  );
  return declared;
}

/** Problems of one ScaledObject's prometheus trigger, which must read the lag of `group`. */
export function lagTriggerProblems(
  trigger: Obj,
  group: string | undefined,
  serverAddress: string | undefined,
): string[] {
  const problems: string[] = [];
  const meta = obj(trigger.metadata);
  for (const key of Object.keys(meta)) {
    if (!PROMETHEUS_METADATA.has(key)) problems.push(`its prometheus trigger has unknown metadata ${key}`);
  }
  // Required; their type (strings, as every metadata value) is checked with the other triggers'.
  for (const key of ["serverAddress", "query", "threshold"]) {
    if (meta[key] === undefined || meta[key] === "")
      problems.push(`its prometheus trigger needs metadata.${key}`);
  }
  if (trigger.metricType !== undefined && !METRIC_TYPES.includes(show(trigger.metricType))) {
    problems.push(`its prometheus trigger's metricType must be ${METRIC_TYPES.join(" or ")}`);
  }
  if (typeof meta.threshold === "string" && !(isNumber(meta.threshold) && Number(meta.threshold) > 0)) {
    problems.push("its prometheus trigger's threshold must be a positive number, as a string");
  }
  if (
    typeof meta.activationThreshold === "string" &&
    !(isNumber(meta.activationThreshold) && Number(meta.activationThreshold) >= 0)
  ) {
    problems.push("its prometheus trigger's activationThreshold must be a number >= 0, as a string");
  }
  for (const key of ["ignoreNullValues", "unsafeSsl"]) {
    if (meta[key] !== undefined && !["true", "false"].includes(show(meta[key])))
      problems.push(`its prometheus trigger's ${key} must be "true" or "false"`);
  }

  const address = typeof meta.serverAddress === "string" ? meta.serverAddress : undefined;
  if (address?.includes("$(")) {
    problems.push(`serverAddress ${address} was not substituted: no kustomize var of that name`);
  } else if (address !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(address);
    } catch {
      // reported below
    }
    if (!url || !["http:", "https:"].includes(url.protocol)) {
      problems.push(`serverAddress "${address}" is not an http(s) URL`);
    }
    if (serverAddress === undefined) {
      problems.push(
        `no ConfigMap ${KEDA_SETTINGS.configMap} with ${KEDA_SETTINGS.serverAddress} (k8s/base/keda.env)`,
      );
    } else if (address !== serverAddress) {
      problems.push(
        `serverAddress "${address}" is not ${KEDA_SETTINGS.serverAddress} of ConfigMap ` +
          `${KEDA_SETTINGS.configMap} ("${serverAddress}")`,
      );
    }
  }

  // The query reads this group's lag, and nothing of another group's.
  const query = typeof meta.query === "string" ? meta.query : "";
  if (query && group) {
    const matchers = [...query.matchAll(/\bgroup\s*(=~|!~|!=|=)\s*"([^"]*)"/g)];
    for (const [text, op, value] of matchers) {
      if (op !== "=" || value !== group) problems.push(`its query's matcher ${text} is not group="${group}"`);
    }
    const lag = new RegExp(`\\b${LAG_METRIC}\\s*\\{[^}]*\\bgroup\\s*=\\s*"${group}"[^}]*\\}`);
    if (!lag.test(query)) problems.push(`its query does not read ${LAG_METRIC}{group="${group}"}`);
    for (const [name] of query.matchAll(/\blocus_[a-z0-9_]+/g)) {
      const base = name.replace(/_(bucket|sum|count)$/, "");
      if (!declaredMetrics().has(name) && !declaredMetrics().has(base)) {
        problems.push(`its query reads ${name}, which packages/metrics/src/metrics.ts does not declare`);
      }
    }
  }
  return problems;
}

/**
 * Problems of an HPA behaviour (an HorizontalPodAutoscaler's spec.behavior, or a ScaledObject's
 * advanced.horizontalPodAutoscalerConfig.behavior): the API server's limits, which KEDA passes on
 * without checking (its HPA is then refused and the ScaledObject does not scale at all).
 */
export function behaviorProblems(behavior: unknown): string[] {
  const problems: string[] = [];
  for (const direction of ["scaleUp", "scaleDown"]) {
    const rules = at(behavior, direction);
    if (rules === undefined) continue;
    if (!isObj(rules)) {
      problems.push(`behavior.${direction} must be an object`);
      continue;
    }
    const window = rules.stabilizationWindowSeconds;
    if (
      window !== undefined &&
      !(Number.isInteger(window) && Number(window) >= 0 && Number(window) <= 3600)
    ) {
      problems.push(`behavior.${direction}.stabilizationWindowSeconds must be an integer from 0 to 3600`);
    }
    if (rules.selectPolicy !== undefined && !["Max", "Min", "Disabled"].includes(show(rules.selectPolicy))) {
      problems.push(`behavior.${direction}.selectPolicy must be Max, Min or Disabled`);
    }
    for (const policy of list(rules.policies).map(obj)) {
      if (!["Pods", "Percent"].includes(show(policy.type)))
        problems.push(`behavior.${direction} policy type must be Pods or Percent`);
      if (!(Number.isInteger(policy.value) && Number(policy.value) > 0))
        problems.push(`behavior.${direction} policy value must be a positive integer`);
      const period = policy.periodSeconds;
      if (!(Number.isInteger(period) && Number(period) > 0 && Number(period) <= 1800))
        problems.push(`behavior.${direction} policy periodSeconds must be an integer from 1 to 1800`);
    }
  }
  return problems;
}

/**
 * Targets whose pods may hold one file for an hour or more: a scale-in must neither churn (a
 * scale-down stabilization longer than the HPA's default, and policies that pace it) nor cut the
 * file in hand (a grace period for the longest allowed).
 */
export function checkScaleIn(rendering: Rendering, byTarget: Map<string, Workload>): void {
  const { problems, where, ofKind } = rendering;
  for (const [target, perSecond] of Object.entries(SHUTDOWN_SECONDS_PER_MEDIA_SECOND)) {
    const d = byTarget.get(target);
    if (!d) continue;
    const w = where(d.doc);
    const maxS = mediaMaxDurationS(d.env);
    // A process that would not start is reported by the workload checks.
    if (maxS !== undefined) {
      const grace = Number(d.podSpec.terminationGracePeriodSeconds ?? 30);
      const needed = Math.ceil(maxS * perSecond + SHUTDOWN_MARGIN_S);
      if (!(grace >= needed)) {
        problems.push(
          `${w}: terminationGracePeriodSeconds ${grace} < ${needed} s ` +
            `(LOCUS_MEDIA_MAX_DURATION_S ${maxS} x ${perSecond} + ${SHUTDOWN_MARGIN_S}): a scale-in ` +
            `or upgrade kills the longest ${target.replace("extractor-", "")} allowed before it is done`,
        );
      }
    }
    const so = ofKind("ScaledObject").find((s) => at(s, "spec", "scaleTargetRef", "name") === d.name);
    if (!so) continue;
    const down = at(so, "spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleDown");
    const window = Number(at(down, "stabilizationWindowSeconds") ?? HPA_DEFAULT_SCALE_DOWN_WINDOW_S);
    if (!(window > HPA_DEFAULT_SCALE_DOWN_WINDOW_S) || list(at(down, "policies")).length === 0) {
      problems.push(
        `${where(so)}: needs advanced.horizontalPodAutoscalerConfig.behavior.scaleDown with a ` +
          `stabilizationWindowSeconds over ${HPA_DEFAULT_SCALE_DOWN_WINDOW_S} and policies: by default ` +
          "the HPA takes away every pod the last five minutes did not need at once",
      );
    }
  }
}
