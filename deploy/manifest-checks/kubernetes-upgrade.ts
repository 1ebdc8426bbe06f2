// A second apply: the rendering of a release after another must apply over it without a refusal.
import { isDeepStrictEqual } from "node:util";
import type { Obj } from "./yaml.ts";
import { at, isObj, loadYamlDocuments, show } from "./yaml.ts";

/**
 * Fields the API server refuses to change on an existing object, by kind: `kubectl apply` of a
 * rendering that changes one fails ("field is immutable") until the object is deleted by hand.
 */
export const IMMUTABLE_FIELDS: Record<string, string[][]> = {
  Job: [
    ["spec", "template"],
    ["spec", "selector"],
    ["spec", "completions"],
  ],
  Deployment: [["spec", "selector"]],
  StatefulSet: [["spec", "selector"]],
  DaemonSet: [["spec", "selector"]],
  Service: [["spec", "clusterIP"]],
};

const key = (o: Obj) =>
  `${show(o.kind)}/${show(at(o, "metadata", "namespace"))}/${show(at(o, "metadata", "name"))}`;

/** The images a rendering's pods run (every `image:` field, wherever it is). */
function images(v: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const x of v) images(x, found);
  else if (isObj(v))
    for (const [k, x] of Object.entries(v)) {
      if (k === "image" && typeof x === "string") found.add(x);
      else images(x, found);
    }
  return found;
}

/**
 * `first` is applied, then `second` (the same overlay, another image and settings): every object
 * the two share must differ in mutable fields only. The two must run different images, or the
 * check proves nothing.
 */
export function checkSecondApply(label: string, firstFile: string, secondFile: string): string[] {
  const problems: string[] = [];
  const load = (file: string) => {
    const { docs, errors } = loadYamlDocuments(file);
    for (const e of errors) problems.push(`[${label}] ${file}: YAML: ${e}`);
    return docs.filter(isObj);
  };
  const first = load(firstFile);
  const second = load(secondFile);
  const before = new Map(first.map((o) => [key(o), o]));
  const [imagesBefore, imagesAfter] = [images(first), images(second)];
  if ([...imagesAfter].every((i) => imagesBefore.has(i)))
    problems.push(`[${label}] the second rendering runs no new image: nothing is tested`);
  for (const o of second) {
    const old = before.get(key(o));
    if (!old) continue;
    for (const path of IMMUTABLE_FIELDS[show(o.kind)] ?? []) {
      if (!isDeepStrictEqual(at(old, ...path), at(o, ...path))) {
        problems.push(
          `[${label}] ${show(o.kind)}/${show(at(o, "metadata", "name"))}: ${path.join(".")} changes ` +
            `between two releases, but cannot change on an existing object: the second apply fails`,
        );
      }
    }
  }
  if (problems.length === 0)
    process.stdout.write(
      `k8s ${label}: a second release applies over the first (${second.length} objects)\n`,
    );
  return problems;
}
