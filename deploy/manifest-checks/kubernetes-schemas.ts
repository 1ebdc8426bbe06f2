// Kubernetes API schemas (kubernetes-models) by apiVersion and kind, and the Secret template's check.
import * as models from "kubernetes-models";
import { SECRET_TEMPLATE } from "./locus.ts";
import type { Obj } from "./yaml.ts";
import { at, isObj, list, loadYamlDocuments, obj, show, text } from "./yaml.ts";

// ---------------------------------------------------------------------------------------------
// Kubernetes schemas: every model class of kubernetes-models, by apiVersion and kind

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: object): { validate(): void };
}

function isModelClass(v: unknown): v is ModelClass {
  return (
    typeof v === "function" &&
    typeof (v as unknown as Obj).apiVersion === "string" &&
    typeof (v as unknown as Obj).kind === "string"
  );
}

export const MODELS = new Map<string, ModelClass>();
// Groups hold versions that hold classes; the core group ("v1") holds its classes directly.
(function collect(namespace: unknown, depth: number): void {
  for (const exported of Object.values(obj(namespace))) {
    if (isModelClass(exported)) MODELS.set(`${exported.apiVersion}/${exported.kind}`, exported);
    else if (depth > 0) collect(exported, depth - 1);
  }
})(models, 2);

export function schemaProblems(doc: Obj, model: ModelClass): string[] {
  try {
    new model(doc).validate();
    return [];
  } catch (err) {
    const errors = list((err as { errors?: unknown }).errors);
    if (errors.length === 0) return [show(err instanceof Error ? err.message : err)];
    return errors.map((e) => {
      const path = (text(at(e, "instancePath")) ?? "").replace(/^\//, "").replace(/\//g, ".") || "(root)";
      const params = at(e, "params");
      const extra = isObj(params) && params.missingProperty ? ` (${show(params.missingProperty)})` : "";
      return `${path}: ${text(at(e, "message")) ?? "invalid"}${extra}`;
    });
  }
}

/** The template is a valid Secret whose every value is an obvious placeholder, never a real one. */
export function checkSecretTemplate(): string[] {
  const problems: string[] = [];
  const where = "k8s/base/secret.example.yaml";
  const { docs, errors } = loadYamlDocuments(SECRET_TEMPLATE);
  for (const e of errors) problems.push(`${where}: YAML: ${e}`);
  const secret = obj(docs[0]);
  const model = MODELS.get("v1/Secret");
  if (docs.length !== 1 || secret.apiVersion !== "v1" || secret.kind !== "Secret" || !model) {
    return [...problems, `${where}: must hold one v1 Secret`];
  }
  for (const p of schemaProblems(secret, model)) problems.push(`${where}: ${p}`);
  if (secret.data !== undefined) problems.push(`${where}: use stringData (readable placeholders), not data`);
  const entries = Object.entries(obj(secret.stringData));
  if (entries.length === 0) problems.push(`${where}: stringData lists no key`);
  for (const [key, value] of entries) {
    if (typeof value !== "string" || !value.includes("CHANGE_ME")) {
      problems.push(`${where}: ${key} must be a placeholder containing CHANGE_ME, never a real value`);
    }
  }
  if (problems.length === 0)
    process.stdout.write(`secret template: ok (${entries.length} placeholder keys)\n`);
  return problems;
}
