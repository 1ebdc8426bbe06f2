// Checks one Kubernetes rendering (base or an overlay), calling the checks of each concern in turn.
import { randomBytes } from "node:crypto";
import { checkAvailability } from "./kubernetes-availability.ts";
import { checkImages } from "./kubernetes-images.ts";
import { checkMemory } from "./kubernetes-memory.ts";
import { checkNetworkPolicies, checkServices } from "./kubernetes-network.ts";
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import { checkScaling } from "./kubernetes-scaling.ts";
import { MODELS, schemaProblems } from "./kubernetes-schemas.ts";
import { checkWorkloads } from "./kubernetes-workloads.ts";
import { locusConfigProblems, requiredTargets, SECRET_TEMPLATE } from "./locus.ts";
import type { Obj } from "./yaml.ts";
import { at, isObj, loadYamlDocuments, obj, show, text } from "./yaml.ts";

// ---------------------------------------------------------------------------------------------
// Kubernetes: one rendering (base or an overlay)

export function checkKubernetes(label: string, file: string, imageEnv: Record<string, string>): string[] {
  const problems: string[] = [];
  const { docs, errors } = loadYamlDocuments(file);
  for (const e of errors) problems.push(`[${label}] YAML: ${e}`);

  const objects: Obj[] = [];
  const seen = new Set<string>();
  for (const [i, doc] of docs.entries()) {
    const apiVersion = text(at(doc, "apiVersion"));
    const kind = text(at(doc, "kind"));
    const name = text(at(doc, "metadata", "name"));
    if (!isObj(doc) || !apiVersion || !kind || !name) {
      problems.push(`[${label}] document ${i + 1}: needs apiVersion, kind and metadata.name`);
      continue;
    }
    const id = `${kind}/${text(at(doc, "metadata", "namespace")) ?? ""}/${name}`;
    if (seen.has(id)) problems.push(`[${label}] ${kind}/${name}: defined twice`);
    seen.add(id);
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) {
      problems.push(`[${label}] ${kind}/${name}: metadata.name is not a valid DNS subdomain`);
    }
    objects.push(doc);
  }
  const where = (o: Obj) => `[${label}] ${show(o.kind)}/${show(at(o, "metadata", "name"))}`;
  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);

  // 1. Every object against its schema; KEDA's by hand below.
  for (const o of objects) {
    const key = `${show(o.apiVersion)}/${show(o.kind)}`;
    if (show(o.apiVersion).startsWith("keda.sh/")) continue;
    const model = MODELS.get(key);
    if (!model) {
      problems.push(`${where(o)}: no schema known for ${key} (a typo in apiVersion or kind?)`);
      continue;
    }
    for (const p of schemaProblems(o, model)) problems.push(`${where(o)}: ${p}`);
  }

  // Secrets: a rendered one, or else the template's keys (the Secret is made out of band).
  const secretKeys = new Map<string, Record<string, string>>();
  for (const s of ofKind("Secret")) {
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj(s.data))) values[k] = Buffer.from(show(v), "base64").toString();
    for (const [k, v] of Object.entries(obj(s.stringData))) values[k] = show(v);
    secretKeys.set(show(at(s, "metadata", "name")), values);
  }
  const template = obj(loadYamlDocuments(SECRET_TEMPLATE).docs[0]);
  const templateName = show(at(template, "metadata", "name"));
  let secretFromTemplate = false;
  if (!secretKeys.has(templateName)) {
    secretFromTemplate = true;
    const values: Record<string, string> = {};
    // The template's placeholders are what Locus must refuse to start with; the checks below go
    // on with random stand-ins, as an operator who filled the template in would have.
    for (const [k, v] of Object.entries(obj(template.stringData))) {
      values[k] = show(v).replace(/CHANGE_ME[\w-]*/g, () => randomBytes(24).toString("base64url"));
    }
    const placeholders = Object.fromEntries(
      Object.entries(obj(template.stringData)).map(([k, v]) => [k, show(v)]),
    );
    for (const name of ["LOCUS_INTERNAL_SECRET", "LOCUS_SIGNING_SECRET"]) {
      if (!(name in placeholders)) continue;
      const refused = locusConfigProblems({ [name]: placeholders[name]! }).some((p) =>
        p.startsWith(`${name}:`),
      );
      if (!refused)
        problems.push(`k8s/base/secret.example.yaml: Locus would start with the placeholder ${name}`);
    }
    secretKeys.set(templateName, values);
  }
  const configMaps = new Map<string, Record<string, string>>();
  for (const c of ofKind("ConfigMap")) {
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj(c.data))) values[k] = show(v);
    configMaps.set(show(at(c, "metadata", "name")), values);
  }

  const rendering: Rendering = { label, objects, problems, where, ofKind };
  const workloads = checkWorkloads(rendering, imageEnv, secretKeys, configMaps);

  const byTarget = new Map<string, Workload>();
  for (const w of workloads) {
    if (!w.target) continue;
    if (byTarget.has(w.target)) problems.push(`[${label}] two Deployments run target ${w.target}`);
    byTarget.set(w.target, w);
  }
  for (const t of requiredTargets(workloads.filter((w) => w.target).map((w) => w.env))) {
    if (!byTarget.has(t)) problems.push(`[${label}] no Deployment runs target ${t}`);
  }

  checkServices(rendering, workloads, byTarget);
  checkScaling(rendering, workloads, byTarget, secretKeys);
  checkMemory(rendering, workloads);
  checkAvailability(rendering, workloads);
  checkImages(rendering);
  checkNetworkPolicies(rendering, workloads);

  // 8. One namespace for everything an overlay puts in one.
  const namespaces = new Set(
    objects.filter((o) => o.kind !== "Namespace").map((o) => text(at(o, "metadata", "namespace"))),
  );
  if (namespaces.size > 1)
    problems.push(`[${label}] objects spread over namespaces ${[...namespaces].join(", ")}`);

  const summary = `${objects.length} objects${secretFromTemplate ? ", Secret keys from the template" : ""}`;
  if (problems.length === 0) process.stdout.write(`k8s ${label}: ok (${summary})\n`);
  return problems;
}
