// Reading untyped YAML: the rendered files, their values, Kubernetes quantities.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

export type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Small helpers for untyped YAML

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
/** A value for a message or a comparison: strings as they are, anything else as JSON. */
export const show = (v: unknown): string =>
  typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
export const at = (v: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((cur, key) => (isObj(cur) ? cur[key] : undefined), v);

/** A Kubernetes quantity ("500m", "1", "512Mi", "1Gi") as a number of cores or bytes. */
export function quantity(value: unknown): number | undefined {
  const s = typeof value === "number" ? show(value) : text(value);
  const m = s?.match(/^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/);
  if (!m) return undefined;
  const scale: Record<string, number> = {
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  };
  return Number(m[1]) * (m[2] ? (scale[m[2]] ?? NaN) : 1);
}

export function loadYamlDocuments(file: string): { docs: unknown[]; errors: string[] } {
  const parsed = parseAllDocuments(readFileSync(file, "utf8"));
  const all = Array.isArray(parsed) ? parsed : [parsed];
  const errors = all.flatMap((d) => d.errors.map((e) => e.message));
  const docs = all.map((d) => d.toJS() as unknown).filter((d) => d !== null && d !== undefined);
  return { docs, errors };
}
