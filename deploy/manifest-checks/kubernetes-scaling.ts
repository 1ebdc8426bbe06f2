// Kubernetes replicas: HorizontalPodAutoscalers and KEDA's ScaledObjects (budgets and spreading:
// kubernetes-availability.ts).
import { behaviorProblems, checkScaleIn, lagTriggerProblems } from "./kubernetes-keda.ts";
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import { HPA_TARGETS, KEDA_SETTINGS, KEDA_TARGETS, QUEUE_GROUPS } from "./locus.ts";
import type { Obj } from "./yaml.ts";
import { at, list, obj, show } from "./yaml.ts";

/**
 * Autoscalers point at real Deployments, and no Deployment is scaled twice; the
 * extractors scale on their queue's depth and lag, and scale in without cutting a file.
 */
export function checkScaling(
  rendering: Rendering,
  workloads: Workload[],
  byTarget: Map<string, Workload>,
  secretKeys: Map<string, Record<string, string>>,
): void {
  const { label, objects, problems, where, ofKind } = rendering;
  // 5. Autoscalers point at real Deployments; nothing fights over replicas.
  const scaledBy = new Map<string, string>();
  const claim = (deployment: string, w: string) => {
    const other = scaledBy.get(deployment);
    if (other) problems.push(`${w}: Deployment ${deployment} is already scaled by ${other}`);
    scaledBy.set(deployment, w);
    const d = workloads.find((x) => x.name === deployment);
    if (!d) problems.push(`${w}: scales Deployment ${deployment}, which is not rendered`);
    else if (at(d.doc, "spec", "replicas") !== undefined) {
      problems.push(
        `${w}: Deployment ${deployment} sets spec.replicas; every apply would reset the autoscaler's count`,
      );
    }
    return d;
  };
  for (const h of ofKind("HorizontalPodAutoscaler")) {
    const ref = obj(at(h, "spec", "scaleTargetRef"));
    if (ref.kind !== "Deployment") problems.push(`${where(h)}: scaleTargetRef must be a Deployment`);
    claim(show(ref.name), where(h));
    const min = Number(at(h, "spec", "minReplicas") ?? 1);
    const max = Number(at(h, "spec", "maxReplicas"));
    if (!(min <= max)) problems.push(`${where(h)}: minReplicas ${min} > maxReplicas ${max}`);
    const cpu = list(at(h, "spec", "metrics")).some((m) => at(m, "resource", "name") === "cpu");
    if (!cpu) problems.push(`${where(h)}: expected a CPU utilisation metric`);
    for (const p of behaviorProblems(at(h, "spec", "behavior"))) problems.push(`${where(h)}: ${p}`);
  }
  for (const t of HPA_TARGETS) {
    const d = byTarget.get(t);
    if (
      d &&
      !ofKind("HorizontalPodAutoscaler").some((h) => at(h, "spec", "scaleTargetRef", "name") === d.name)
    ) {
      problems.push(`[${label}] no HorizontalPodAutoscaler for ${t}`);
    }
  }
  // 6. KEDA: not in kubernetes-models, so checked by its documented shape.
  const triggerAuths = new Map<string, Obj>();
  for (const a of objects.filter((o) => show(o.apiVersion).startsWith("keda.sh/"))) {
    if (a.apiVersion !== "keda.sh/v1alpha1") {
      problems.push(`${where(a)}: apiVersion must be keda.sh/v1alpha1, got ${show(a.apiVersion)}`);
    }
    if (a.kind === "TriggerAuthentication") {
      triggerAuths.set(show(at(a, "metadata", "name")), a);
      const refs = list(at(a, "spec", "secretTargetRef")).map(obj);
      if (refs.length === 0) problems.push(`${where(a)}: spec.secretTargetRef must list at least one entry`);
      for (const r of refs) {
        if (![r.parameter, r.name, r.key].every((v) => typeof v === "string" && v !== "")) {
          problems.push(`${where(a)}: each secretTargetRef needs parameter, name and key (strings)`);
        } else if (secretKeys.get(show(r.name))?.[show(r.key)] === undefined) {
          problems.push(`${where(a)}: Secret ${show(r.name)} has no key ${show(r.key)}`);
        }
      }
    } else if (a.kind !== "ScaledObject") {
      problems.push(`${where(a)}: unexpected KEDA kind ${show(a.kind)}`);
    }
  }
  const scaledObjects = objects.filter((o) => o.kind === "ScaledObject");
  // keda.env's ConfigMap (a generated name: locus-keda-<hash>), whose address the lag triggers carry.
  const kedaSettings = objects.find(
    (o) =>
      o.kind === "ConfigMap" &&
      new RegExp(`^${KEDA_SETTINGS.configMap}(-[a-z0-9]+)?$`).test(show(at(o, "metadata", "name"))),
  );
  const serverAddress = at(kedaSettings, "data", KEDA_SETTINGS.serverAddress);
  for (const so of scaledObjects) {
    const w = where(so);
    const spec = obj(so.spec);
    const ref = obj(spec.scaleTargetRef);
    if (typeof ref.name !== "string") {
      problems.push(`${w}: spec.scaleTargetRef.name must name a Deployment`);
      continue;
    }
    if (ref.kind !== undefined && ref.kind !== "Deployment")
      problems.push(`${w}: scaleTargetRef must be a Deployment`);
    const d = claim(ref.name, w);
    for (const f of ["minReplicaCount", "maxReplicaCount", "pollingInterval", "cooldownPeriod"]) {
      if (spec[f] !== undefined && !(Number.isInteger(spec[f]) && Number(spec[f]) >= 0)) {
        problems.push(`${w}: spec.${f} must be a non-negative integer`);
      }
    }
    if (Number(spec.minReplicaCount ?? 0) > Number(spec.maxReplicaCount ?? 100)) {
      problems.push(`${w}: minReplicaCount exceeds maxReplicaCount`);
    }
    const triggers = list(spec.triggers).map(obj);
    const first = triggers[0];
    for (const t of triggers) {
      if (!["rabbitmq", "prometheus"].includes(show(t.type)))
        problems.push(`${w}: trigger type ${show(t.type)}: expected rabbitmq or prometheus`);
      // KEDA's CRD takes metadata values as strings only: an unquoted number is refused.
      for (const [k, v] of Object.entries(obj(t.metadata))) {
        if (typeof v !== "string")
          problems.push(`${w}: ${show(t.type)} trigger metadata.${k} must be a string`);
      }
    }
    const behavior = at(spec, "advanced", "horizontalPodAutoscalerConfig", "behavior");
    for (const p of behaviorProblems(behavior))
      problems.push(`${w}: advanced.horizontalPodAutoscalerConfig.${p}`);
    if (!first) {
      problems.push(`${w}: spec.triggers must hold at least one trigger`);
      continue;
    }
    const meta = obj(first.metadata);
    if (first.type !== "rabbitmq")
      problems.push(`${w}: triggers[0].type must be "rabbitmq", got ${show(first.type)}`);
    if (typeof meta.queueName !== "string" || meta.queueName === "") {
      problems.push(`${w}: triggers[0].metadata.queueName must name the queue`);
    }
    if (meta.mode !== undefined && !["QueueLength", "MessageRate"].includes(show(meta.mode))) {
      problems.push(`${w}: triggers[0].metadata.mode must be QueueLength or MessageRate`);
    }
    if (meta.value !== undefined && (typeof meta.value !== "string" || !(Number(meta.value) > 0))) {
      problems.push(`${w}: triggers[0].metadata.value must be a positive number, as a string`);
    }
    if (meta.protocol !== undefined && !["amqp", "http", "auto"].includes(show(meta.protocol))) {
      problems.push(`${w}: triggers[0].metadata.protocol must be amqp, http or auto`);
    }
    const authName = at(first, "authenticationRef", "name");
    if (authName !== undefined) {
      const auth = triggerAuths.get(show(authName));
      if (!auth)
        problems.push(`${w}: authenticationRef names TriggerAuthentication ${show(authName)}, not rendered`);
      else if (!list(at(auth, "spec", "secretTargetRef")).some((r) => at(r, "parameter") === "host")) {
        problems.push(`${w}: TriggerAuthentication ${show(authName)} gives no "host" (the broker URL)`);
      }
    } else if (meta.host === undefined && meta.hostFromEnv === undefined) {
      problems.push(`${w}: the rabbitmq trigger needs the broker: authenticationRef, host or hostFromEnv`);
    }
    // The queue must be the one the scaled workers consume: prefix + their group.
    const group = d?.target ? QUEUE_GROUPS[d.target] : undefined;
    const env = d?.env;
    if (d && !group) problems.push(`${w}: Deployment ${d.name} (${show(d.target)}) consumes no queue`);
    if (group && env && typeof meta.queueName === "string") {
      const expected = `${env.LOCUS_AMQP_PREFIX ?? ""}${group}`;
      if (meta.queueName !== expected) {
        problems.push(`${w}: queueName "${meta.queueName}", but ${d?.target} consumes "${expected}"`);
      }
    }
    // The lag of the same group (locus_bus_consumer_lag_seconds), asked of Prometheus.
    const lagTriggers = triggers.filter((t) => t.type === "prometheus");
    if (d?.target && KEDA_TARGETS.includes(d.target)) {
      if (lagTriggers.length !== 1) {
        problems.push(`${w}: expected one prometheus trigger (the group's lag), got ${lagTriggers.length}`);
      }
    }
    for (const t of lagTriggers) {
      for (const p of lagTriggerProblems(
        t,
        group,
        typeof serverAddress === "string" ? serverAddress : undefined,
      ))
        problems.push(`${w}: ${p}`);
    }
  }
  for (const t of KEDA_TARGETS) {
    const d = byTarget.get(t);
    if (d && !scaledObjects.some((s) => at(s, "spec", "scaleTargetRef", "name") === d.name)) {
      problems.push(`[${label}] no KEDA ScaledObject for ${t}`);
    }
  }
  checkScaleIn(rendering, byTarget);
}
