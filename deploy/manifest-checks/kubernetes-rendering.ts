// What the checks of one Kubernetes rendering share: its objects and problems, its Deployments.
import type { Obj } from "./yaml.ts";
import { obj } from "./yaml.ts";

/** One rendering (base or an overlay) under check: every check adds to its problems. */
export interface Rendering {
  label: string;
  objects: Obj[];
  problems: string[];
  /** "[label] Kind/name", the start of a problem about that object. */
  where: (o: Obj) => string;
  ofKind: (kind: string) => Obj[];
}

/** A Deployment, with what the checks after the first pass need of it. */
export interface Workload {
  name: string;
  doc: Obj;
  podSpec: Obj;
  podLabels: Obj;
  target: string | undefined;
  /** The environment of its first container, as the process will see it. */
  env: Record<string, string>;
}

export function matches(selector: unknown, labels: Obj): boolean {
  const wanted = Object.entries(obj(selector));
  return wanted.length > 0 && wanted.every(([k, v]) => labels[k] === v);
}
