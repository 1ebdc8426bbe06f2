/**
 * Offline checks of what deploy/validate.sh rendered: Kubernetes objects against the API schemas
 * (kubernetes-models), the KEDA objects by their documented shape, and both the manifests and the
 * compose file against Locus itself: every process's environment must pass Locus's own
 * configuration rules (packages/runtime/src/config.ts), and the names that tie objects together
 * (Services, Secrets, queues, URLs) must point at something that exists.
 *
 *   node --import tsx deploy/validate-manifests.ts \
 *     --k8s base=rendered-base.yaml --k8s production=rendered-production.yaml \
 *     --compose compose-config.yaml
 *
 * Exits 1 listing every problem, 0 with a summary of what was checked.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as models from "kubernetes-models";
import { parseAllDocuments } from "yaml";
import { ConfigError, loadConfig, TARGETS } from "../packages/runtime/src/config.ts";

type Obj = Record<string, unknown>;

const repoFile = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** Every target that runs as its own Deployment / compose service (all but `all`). */
const SPLIT_TARGETS = TARGETS.filter((t) => t !== "all");
/** Consumer groups, hence RabbitMQ queue names (services/<target>/src/*-module.ts). */
const QUEUE_GROUPS: Record<string, string> = {
  "extractor-pdf": "extractor-pdf",
  "extractor-image": "extractor-image",
  "extractor-audio": "extractor-audio",
  "extractor-video": "extractor-video",
  indexer: "indexer",
};
/** Targets other processes call over HTTP: each needs a Service (k8s) and a URL on the gateway. */
const CALLED_TARGETS: Record<string, string> = { files: "LOCUS_FILES_URL", search: "LOCUS_SEARCH_URL" };
/** The Secret's keys, with placeholders; the manifests expect a Secret of that name and keys. */
const SECRET_TEMPLATE = repoFile("k8s/base/secret.example.yaml");
const HPA_TARGETS = ["gateway", "search"];
const PDB_TARGETS = ["gateway", "files", "search"];
/** Targets scaled by KEDA on the depth of their queue (QUEUE_GROUPS). */
const KEDA_TARGETS = ["extractor-pdf", "extractor-image", "extractor-audio", "extractor-video"];
/** Memory of one OCR recogniser (a tesseract.js thread with its own copy of the model), in MB. */
const OCR_RECOGNISER_MB = 250;
/** LOCUS_OCR_WORKERS's default is min(4, the node's cores): counted at its most when unset. */
const OCR_WORKERS_DEFAULT_MAX = 4;
/**
 * Memory of one recording (or video's sound track) in flight, in MB: its pocketsphinx process
 * (~150 MB on a 40 s chunk of speech; counted whatever LOCUS_SPEECH_ENGINE says, so switching back
 * needs no resizing) and the buffers around it (ffmpeg, the chunks).
 */
const RECORDING_MB = { pocketsphinx: 150, buffers: 50 };
/** Targets that transcribe sound, each LOCUS_EXTRACT_CONCURRENCY files at a time. */
const SPEECH_TARGETS = ["extractor-audio", "extractor-video"];
/**
 * Memory of ai search's word vectors (the local embedder, ~100 MB resident once loaded), in MB:
 * every process that embeds loads them at start, whatever LOCUS_EMBEDDER says.
 */
const WORD_VECTORS_MB = 100;
/** Targets that load the word vectors: the indexer embeds passages, search embeds questions. */
const EMBEDDING_TARGETS = ["indexer", "search"];
/** Targets that keep users' passage vectors in memory between searches (LOCUS_VECTOR_CACHE_MB). */
const VECTOR_CACHE_TARGETS = ["search"];
/** Default of LOCUS_VECTOR_CACHE_MB (packages/runtime/src/config.ts). */
const VECTOR_CACHE_MB_DEFAULT = 256;
/** Default of LOCUS_POSTINGS_CACHE_MB, held by the same targets when the search index is Postgres. */
const POSTINGS_CACHE_MB_DEFAULT = 128;
/** The operator CLI commands a Job (or a CronJob's Job) may run, by kind. */
const JOB_COMMANDS: Record<string, { command: RegExp; what: string }> = {
  Job: { command: /cli\.ts migrate$/, what: "the migrate command" },
  CronJob: { command: /cli\.ts index rebuild$/, what: "the index rebuild command" },
};
/** Targets that write each file in flight whole to /tmp (os.tmpdir()) for ffmpeg. */
const MEDIA_FILE_TARGETS = ["extractor-audio", "extractor-video"];
/** Defaults of LOCUS_EXTRACT_CONCURRENCY and LOCUS_MAX_UPLOAD_BYTES (packages/runtime/src/config.ts). */
const EXTRACT_CONCURRENCY_DEFAULT = 2;
const MAX_UPLOAD_BYTES_DEFAULT = 100 * 2 ** 20;
/** /tmp beyond the recordings and videos in flight, in bytes: sound chunks as WAVs (~1.3 MB), tsx's cache. */
const RECORDING_TMP_EXTRA = 32 * 2 ** 20;

// ---------------------------------------------------------------------------------------------
// Small helpers for untyped YAML

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
/** A value for a message or a comparison: strings as they are, anything else as JSON. */
const show = (v: unknown): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));
const at = (v: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((cur, key) => (isObj(cur) ? cur[key] : undefined), v);

/** A Kubernetes quantity ("500m", "1", "512Mi", "1Gi") as a number of cores or bytes. */
function quantity(value: unknown): number | undefined {
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

function loadYamlDocuments(file: string): { docs: unknown[]; errors: string[] } {
  const parsed = parseAllDocuments(readFileSync(file, "utf8"));
  const all = Array.isArray(parsed) ? parsed : [parsed];
  const errors = all.flatMap((d) => d.errors.map((e) => e.message));
  const docs = all.map((d) => d.toJS() as unknown).filter((d) => d !== null && d !== undefined);
  return { docs, errors };
}

/** ENV of the image's final stage (deploy/Dockerfile): what every container starts with. */
function imageEnvironment(): Record<string, string> {
  const dockerfile = readFileSync(repoFile("deploy/Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const finalStage = dockerfile.split(/^FROM\s/m).at(-1) ?? "";
  const env: Record<string, string> = {};
  for (const line of finalStage.split("\n")) {
    const m = line.match(/^ENV\s+(.*)$/);
    if (!m?.[1]) continue;
    for (const pair of m[1].trim().split(/\s+/)) {
      const eq = pair.indexOf("=");
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, "$1");
    }
  }
  return env;
}

/** Runs Locus's own configuration check; returns its problems (none when the process would start). */
function locusConfigProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

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

const MODELS = new Map<string, ModelClass>();
// Groups hold versions that hold classes; the core group ("v1") holds its classes directly.
(function collect(namespace: unknown, depth: number): void {
  for (const exported of Object.values(obj(namespace))) {
    if (isModelClass(exported)) MODELS.set(`${exported.apiVersion}/${exported.kind}`, exported);
    else if (depth > 0) collect(exported, depth - 1);
  }
})(models, 2);

function schemaProblems(doc: Obj, model: ModelClass): string[] {
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

// ---------------------------------------------------------------------------------------------
// Kubernetes: one rendering (base or an overlay)

/** A Deployment, with what the checks after the first pass need of it. */
interface Workload {
  name: string;
  doc: Obj;
  podSpec: Obj;
  podLabels: Obj;
  target: string | undefined;
  /** The environment of its first container, as the process will see it. */
  env: Record<string, string>;
}

function matches(selector: unknown, labels: Obj): boolean {
  const wanted = Object.entries(obj(selector));
  return wanted.length > 0 && wanted.every(([k, v]) => labels[k] === v);
}

function checkKubernetes(label: string, file: string, imageEnv: Record<string, string>): string[] {
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

  // 2. Workloads: probes, resources, security, and the environment Locus will read.
  const workloads: Workload[] = [];
  for (const o of [...ofKind("Deployment"), ...ofKind("Job"), ...ofKind("CronJob")]) {
    // A CronJob's pods come from its Job template.
    const template =
      o.kind === "CronJob" ? at(o, "spec", "jobTemplate", "spec", "template") : at(o, "spec", "template");
    const podSpec = obj(at(template, "spec"));
    const podLabels = obj(at(template, "metadata", "labels"));
    const isDeployment = o.kind === "Deployment";
    const w = where(o);
    // Locus's CronJobs are templates for runs by hand (kubectl create job --from=cronjob/...).
    if (o.kind === "CronJob" && at(o, "spec", "suspend") !== true) {
      problems.push(`${w}: must be suspended (spec.suspend: true): it is run by hand, never on a schedule`);
    }
    if (isDeployment && !matches(at(o, "spec", "selector", "matchLabels"), podLabels)) {
      problems.push(`${w}: spec.selector.matchLabels does not match the pod template's labels`);
    }
    if (at(podSpec, "securityContext", "runAsNonRoot") !== true) {
      problems.push(`${w}: the pod must set securityContext.runAsNonRoot: true`);
    }
    const volumes = new Map(list(podSpec.volumes).map((v) => [text(at(v, "name")), obj(v)]));
    const containers = list(podSpec.containers).map(obj);
    let target: string | undefined;
    let firstEnv: Record<string, string> | undefined;
    for (const c of containers) {
      const cw = `${w} container ${show(c.name)}`;
      const sc = obj(c.securityContext);
      if (sc.readOnlyRootFilesystem !== true) problems.push(`${cw}: readOnlyRootFilesystem must be true`);
      if (sc.allowPrivilegeEscalation !== false)
        problems.push(`${cw}: allowPrivilegeEscalation must be false`);
      const mounts = list(c.volumeMounts).map(obj);
      for (const m of mounts) {
        if (!volumes.has(text(m.name))) problems.push(`${cw}: mounts volume ${show(m.name)}, not defined`);
      }
      const tmp = mounts.find((m) => m.mountPath === "/tmp");
      if (!tmp || !isObj(volumes.get(text(tmp.name))?.emptyDir)) {
        problems.push(`${cw}: needs a writable /tmp (an emptyDir): tsx keeps its compile cache there`);
      }

      // Resources: requests and limits for both, requests within limits.
      const req = obj(at(c, "resources", "requests"));
      const lim = obj(at(c, "resources", "limits"));
      for (const r of ["cpu", "memory"]) {
        const rq = quantity(req[r]);
        const lm = quantity(lim[r]);
        if (rq === undefined || lm === undefined) {
          problems.push(`${cw}: resources.requests.${r} and resources.limits.${r} must both be set`);
        } else if (rq > lm) {
          problems.push(
            `${cw}: resources.requests.${r} (${show(req[r])}) exceeds the limit (${show(lim[r])})`,
          );
        }
      }

      // The environment, as the process will see it.
      const env: Record<string, string> = { ...imageEnv };
      for (const from of list(c.envFrom)) {
        const cm = text(at(from, "configMapRef", "name"));
        const sec = text(at(from, "secretRef", "name"));
        if (cm !== undefined) {
          const data = configMaps.get(cm);
          if (!data) problems.push(`${cw}: envFrom names ConfigMap ${cm}, which is not rendered`);
          Object.assign(env, data);
        }
        if (sec !== undefined) {
          const data = secretKeys.get(sec);
          if (!data)
            problems.push(`${cw}: envFrom names Secret ${sec}, neither rendered nor in the template`);
          Object.assign(env, data);
        }
      }
      for (const e of list(c.env).map(obj)) {
        const name = show(e.name);
        if (typeof e.value === "string") env[name] = e.value;
        else if (e.value === undefined && !e.valueFrom) env[name] = "";
        const cmRef = obj(at(e, "valueFrom", "configMapKeyRef"));
        const secRef = obj(at(e, "valueFrom", "secretKeyRef"));
        for (const [kind, ref, source] of [
          ["ConfigMap", cmRef, configMaps],
          ["Secret", secRef, secretKeys],
        ] as const) {
          if (ref.name === undefined) continue;
          const value = source.get(show(ref.name))?.[show(ref.key)];
          if (value === undefined && ref.optional !== true) {
            problems.push(`${cw}: env ${name} reads ${kind} ${show(ref.name)} key ${show(ref.key)}, missing`);
          } else if (value !== undefined) env[name] = value;
        }
      }
      for (const p of locusConfigProblems(env)) problems.push(`${cw}: Locus would refuse to start: ${p}`);
      const targets = (env.LOCUS_TARGETS ?? "all").split(",").map((t) => t.trim());
      const runs = (t: string) => targets.includes(t) || targets.includes("all");

      // Unset or empty: Locus takes its default.
      const concurrency = env.LOCUS_EXTRACT_CONCURRENCY?.trim()
        ? Number(env.LOCUS_EXTRACT_CONCURRENCY)
        : EXTRACT_CONCURRENCY_DEFAULT;

      // Heaps (and OCR recognisers, speech recognisers) must fit in the memory limit, or the
      // kernel kills the pod before V8 reports anything.
      const memLimit = quantity(lim.memory);
      const mainHeapMb = Number(env.NODE_OPTIONS?.match(/--max-old-space-size=(\d+)/)?.[1] ?? NaN);
      if (isDeployment && memLimit !== undefined) {
        if (Number.isNaN(mainHeapMb)) {
          problems.push(`${cw}: set NODE_OPTIONS=--max-old-space-size=<MB> below the memory limit`);
        } else {
          let heaps = mainHeapMb;
          const parts = ["main"];
          if (runs("extractor-pdf")) {
            heaps += concurrency * Number(env.LOCUS_EXTRACT_MAX_HEAP_MB ?? 1024);
            parts.push("concurrency x LOCUS_EXTRACT_MAX_HEAP_MB");
          }
          // The recognisers are shared by the image extractor, the video one's frames and the PDF
          // one's scanned pages: counted once.
          if (
            runs("extractor-image") ||
            runs("extractor-video") ||
            (runs("extractor-pdf") && env.LOCUS_PDF_OCR !== "false")
          ) {
            // Unset or empty: Locus takes its default, which follows the node, not the limit.
            const set = env.LOCUS_OCR_WORKERS?.trim() ? Number(env.LOCUS_OCR_WORKERS) : undefined;
            heaps += (set ?? OCR_WORKERS_DEFAULT_MAX) * OCR_RECOGNISER_MB;
            const workers =
              set === undefined
                ? `${OCR_WORKERS_DEFAULT_MAX} (LOCUS_OCR_WORKERS unset)`
                : "LOCUS_OCR_WORKERS";
            parts.push(`${workers} x ${OCR_RECOGNISER_MB} MB`);
          }
          // ai search: the word vectors, once per process, and the cache of passage vectors.
          if (EMBEDDING_TARGETS.some(runs)) {
            heaps += WORD_VECTORS_MB;
            parts.push(`${WORD_VECTORS_MB} MB word vectors`);
          }
          if (VECTOR_CACHE_TARGETS.some(runs)) {
            heaps += env.LOCUS_VECTOR_CACHE_MB?.trim()
              ? Number(env.LOCUS_VECTOR_CACHE_MB)
              : VECTOR_CACHE_MB_DEFAULT;
            parts.push("LOCUS_VECTOR_CACHE_MB");
            if (env.LOCUS_SEARCH_INDEX === "postgres") {
              heaps += env.LOCUS_POSTINGS_CACHE_MB?.trim()
                ? Number(env.LOCUS_POSTINGS_CACHE_MB)
                : POSTINGS_CACHE_MB_DEFAULT;
              parts.push("LOCUS_POSTINGS_CACHE_MB");
            }
          }
          // Each recording or video in flight runs one pocketsphinx process at a time, outside the
          // heap; an all-in-one process takes LOCUS_EXTRACT_CONCURRENCY of each kind at once.
          for (const t of SPEECH_TARGETS.filter(runs)) {
            heaps += concurrency * (RECORDING_MB.pocketsphinx + RECORDING_MB.buffers);
            parts.push(
              `concurrency x (${RECORDING_MB.pocketsphinx} MB pocketsphinx + ` +
                `${RECORDING_MB.buffers} MB buffers) for ${t}`,
            );
          }
          if (heaps * 2 ** 20 > 0.9 * memLimit) {
            problems.push(
              `${cw}: heaps (${heaps} MB: ${parts.join(" + ")}) ` +
                `leave under 10% of the memory limit ${show(lim.memory)} for everything else`,
            );
          }
        }
      }

      // Each recording or video in flight is written whole to /tmp (os.tmpdir()): a smaller
      // emptyDir gets the pod evicted mid-file. An all-in-one process holds both kinds at once.
      // Deployments only: the migration Job runs no extractor, whatever LOCUS_TARGETS says.
      const tmpSize = at(volumes.get(text(tmp?.name)), "emptyDir", "sizeLimit");
      const tmpLimit = quantity(tmpSize);
      const mediaTargets = MEDIA_FILE_TARGETS.filter(runs);
      if (isDeployment && mediaTargets.length > 0 && tmpLimit !== undefined) {
        const maxUpload = env.LOCUS_MAX_UPLOAD_BYTES?.trim()
          ? Number(env.LOCUS_MAX_UPLOAD_BYTES)
          : MAX_UPLOAD_BYTES_DEFAULT;
        const needed = mediaTargets.length * concurrency * maxUpload + RECORDING_TMP_EXTRA;
        if (tmpLimit < needed) {
          const times = mediaTargets.length > 1 ? `${mediaTargets.length} x ` : "";
          problems.push(
            `${cw}: /tmp's sizeLimit ${show(tmpSize)} ` +
              `holds less than ${times}concurrency x LOCUS_MAX_UPLOAD_BYTES + ` +
              `${RECORDING_TMP_EXTRA / 2 ** 20} MiB (${Math.ceil(needed / 2 ** 20)} MiB): ` +
              `the ${mediaTargets.join(" and ")} files in flight are written there`,
          );
        }
      }

      if (isDeployment) {
        // One target per Deployment, served on the port the container declares.
        if (targets.length !== 1 || !(SPLIT_TARGETS as readonly string[]).includes(targets[0] ?? "")) {
          problems.push(
            `${cw}: LOCUS_TARGETS must name one of ${SPLIT_TARGETS.join(", ")}, got "${targets.join(",")}"`,
          );
        } else {
          target = targets[0];
        }
        const ports = list(c.ports).map(obj);
        const http = ports.find((p) => show(p.containerPort) === (env.PORT ?? "8080"));
        if (!http) problems.push(`${cw}: declares no containerPort ${env.PORT ?? "8080"} (PORT)`);
        for (const [probe, path] of [
          ["livenessProbe", "/healthz"],
          ["readinessProbe", "/readyz"],
        ] as const) {
          const get = obj(at(c, probe, "httpGet"));
          if (get.path !== path) problems.push(`${cw}: ${probe} must be an httpGet on ${path}`);
          const port = get.port;
          const ok = port === Number(env.PORT ?? 8080) || (http !== undefined && port === http.name);
          if (get.path === path && !ok)
            problems.push(`${cw}: ${probe} port ${show(port)} is not the HTTP port`);
        }
      } else {
        const command = list(c.command).map(String).join(" ");
        const expected = JOB_COMMANDS[show(o.kind)];
        if (expected && !expected.command.test(command))
          problems.push(`${cw}: expected ${expected.what}, got "${command}"`);
      }
      firstEnv ??= env;
    }
    if (isDeployment) {
      const name = show(at(o, "metadata", "name"));
      workloads.push({ name, doc: o, podSpec, podLabels, target, env: firstEnv ?? {} });
    }
  }
  if (ofKind("Job").length === 0) problems.push(`[${label}] no migration Job`);

  const byTarget = new Map<string, Workload>();
  for (const w of workloads) {
    if (!w.target) continue;
    if (byTarget.has(w.target)) problems.push(`[${label}] two Deployments run target ${w.target}`);
    byTarget.set(w.target, w);
  }
  for (const t of SPLIT_TARGETS) {
    if (!byTarget.has(t)) problems.push(`[${label}] no Deployment runs target ${t}`);
  }

  // 3. Services select exactly one Deployment and reach a port it declares.
  const serviceTarget = new Map<string, { target: string | undefined; ports: Obj[] }>();
  for (const s of ofKind("Service")) {
    const selected = workloads.filter((w) => matches(at(s, "spec", "selector"), w.podLabels));
    if (selected.length !== 1) {
      problems.push(`${where(s)}: its selector matches ${selected.length} Deployments, expected 1`);
      continue;
    }
    const w = selected[0] as Workload;
    const containerPorts = list(at(w.podSpec, "containers"))
      .flatMap((c) => list(at(c, "ports")))
      .map(obj);
    const ports = list(at(s, "spec", "ports")).map(obj);
    for (const p of ports) {
      const tp = p.targetPort ?? p.port;
      if (!containerPorts.some((cp) => cp.name === tp || cp.containerPort === tp)) {
        problems.push(`${where(s)}: targetPort ${show(tp)} is not a port of Deployment ${w.name}`);
      }
    }
    serviceTarget.set(show(at(s, "metadata", "name")), { target: w.target, ports });
  }

  // 4. The gateway reaches files and search through those Services.
  const gateway = byTarget.get("gateway");
  const gatewayEnv = gateway?.env;
  for (const [target, variable] of Object.entries(CALLED_TARGETS)) {
    const url = gatewayEnv?.[variable];
    if (!gateway || !url) continue; // already reported by Locus's own check
    const u = new URL(url);
    const [host, namespace] = u.hostname.split(".");
    const renderedNamespace = text(at(gateway.doc, "metadata", "namespace"));
    const service = serviceTarget.get(host ?? "");
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    if (!service) {
      problems.push(`[${label}] gateway ${variable}=${url}: no Service named ${show(host)}`);
    } else if (service.target !== target) {
      problems.push(
        `[${label}] gateway ${variable}=${url}: Service ${show(host)} runs ${show(service.target)}`,
      );
    } else if (!service.ports.some((p) => show(p.port) === port)) {
      problems.push(`[${label}] gateway ${variable}=${url}: Service ${show(host)} has no port ${port}`);
    } else if (namespace && namespace !== "svc" && renderedNamespace && namespace !== renderedNamespace) {
      problems.push(
        `[${label}] gateway ${variable}=${url}: namespace ${namespace}, but Locus runs in ${renderedNamespace}`,
      );
    }
  }
  for (const t of Object.keys(CALLED_TARGETS)) {
    if (![...serviceTarget.values()].some((s) => s.target === t))
      problems.push(`[${label}] no Service for ${t}`);
  }

  // 5. Autoscalers and disruption budgets point at real Deployments; nothing fights over replicas.
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
  for (const p of ofKind("PodDisruptionBudget")) {
    const selected = workloads.filter((w) => matches(at(p, "spec", "selector", "matchLabels"), w.podLabels));
    if (selected.length !== 1)
      problems.push(`${where(p)}: its selector matches ${selected.length} Deployments`);
  }
  for (const t of PDB_TARGETS) {
    const d = byTarget.get(t);
    const covered = ofKind("PodDisruptionBudget").some(
      (p) => d && matches(at(p, "spec", "selector", "matchLabels"), d.podLabels),
    );
    if (d && !covered) problems.push(`[${label}] no PodDisruptionBudget for ${t}`);
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
  }
  for (const t of KEDA_TARGETS) {
    const d = byTarget.get(t);
    if (d && !scaledObjects.some((s) => at(s, "spec", "scaleTargetRef", "name") === d.name)) {
      problems.push(`[${label}] no KEDA ScaledObject for ${t}`);
    }
  }

  // 7. The network: only gateways may reach files and search, nothing may reach the indexer and
  //    the extractors (NetworkPolicy ingress; a pod no policy selects is open to the cluster).
  const policies = ofKind("NetworkPolicy").map((p) => ({
    name: show(at(p, "metadata", "name")),
    selector: obj(at(p, "spec", "podSelector")),
    ingress: (at(p, "spec", "ingress") as Obj[] | undefined) ?? [],
  }));
  const selects = (selector: Obj, labels: Obj) =>
    Object.entries(obj(selector.matchLabels)).every(([k, v]) => labels[k] === v) &&
    ((selector.matchExpressions as Obj[] | undefined) ?? []).every((e) => {
      const value = labels[show(e.key)];
      const values = (e.values as unknown[] | undefined) ?? [];
      if (e.operator === "In") return values.includes(value);
      if (e.operator === "NotIn") return !values.includes(value);
      if (e.operator === "Exists") return value !== undefined;
      return value === undefined;
    });
  const gatewayLabels = workloads.find((w) => w.target === "gateway")?.podLabels ?? {};
  for (const w of workloads.filter((x) => x.doc.kind === "Deployment")) {
    const applying = policies.filter((p) => selects(p.selector, w.podLabels));
    const ww = `[${label}] Deployment/${w.name}`;
    if (applying.length === 0) {
      problems.push(`${ww}: no NetworkPolicy selects its pods, so anything in the cluster reaches them`);
      continue;
    }
    const sources = applying.flatMap((p) => p.ingress.map((rule) => ({ policy: p.name, rule })));
    if (w.target === "gateway") continue;
    for (const { policy, rule } of sources) {
      const from = (rule.from as Obj[] | undefined) ?? [];
      const onlyGateways =
        from.length > 0 &&
        from.every(
          (f) => f.ipBlock === undefined && f.namespaceSelector === undefined && isObj(f.podSelector),
        ) &&
        from.every((f) => selects(obj(f.podSelector), gatewayLabels));
      if (w.target !== "files" && w.target !== "search") {
        problems.push(`${ww}: NetworkPolicy ${policy} lets connections in; it serves nobody`);
      } else if (!onlyGateways) {
        problems.push(`${ww}: NetworkPolicy ${policy} lets in more than Locus's gateways`);
      }
    }
  }

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

/** The template is a valid Secret whose every value is an obvious placeholder, never a real one. */
function checkSecretTemplate(): string[] {
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

// ---------------------------------------------------------------------------------------------
// docker-compose: the output of `docker-compose config` (every variable and anchor resolved)

function composePorts(service: Obj): { published: string; target: string }[] {
  return list(service.ports).map((p) => {
    if (isObj(p)) return { published: show(p.published ?? ""), target: show(p.target ?? "") };
    // "[ip:]published:target[/proto]" or "target"
    const parts = show(p)
      .replace(/\/\w+$/, "")
      .split(":");
    return { published: parts.length > 1 ? (parts.at(-2) ?? "") : "", target: parts.at(-1) ?? "" };
  });
}

function composeEnv(service: Obj): Record<string, string> {
  const raw = service.environment;
  const env: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const item of raw) {
      const s = show(item);
      const eq = s.indexOf("=");
      if (eq > 0) env[s.slice(0, eq)] = s.slice(eq + 1);
    }
  } else {
    for (const [k, v] of Object.entries(obj(raw))) if (v !== null && v !== undefined) env[k] = show(v);
  }
  return env;
}

function checkCompose(file: string, imageEnv: Record<string, string>): string[] {
  const problems: string[] = [];
  const { docs, errors } = loadYamlDocuments(file);
  for (const e of errors) problems.push(`[compose] YAML: ${e}`);
  const services = obj(at(docs[0], "services"));
  const names = Object.keys(services);
  const svc = (name: string) => obj(services[name]);
  const isLocus = (s: Obj) =>
    text(s.image)?.startsWith("locus:") === true ||
    /deploy\/Dockerfile$/.test(text(at(s, "build", "dockerfile")) ?? "");
  const hasHealthcheck = (s: Obj) => {
    const test = list(at(s, "healthcheck", "test")).map(String);
    return at(s, "healthcheck", "disable") !== true && test.length > 0 && test[0] !== "NONE";
  };

  // Infrastructure the issue asks for.
  const byImage = (re: RegExp) => names.filter((n) => re.test(text(svc(n).image) ?? ""));
  const required: [string, RegExp][] = [
    ["RabbitMQ with the management UI", /(^|\/)rabbitmq:[^ ]*management/],
    ["Postgres 15", /(^|\/)postgres:15/],
    ["an S3-compatible store (MinIO)", /(^|\/)minio\/minio:/],
    ["Elasticsearch 8", /elasticsearch\/elasticsearch:8\./],
    ["Redis", /(^|\/)redis:/],
  ];
  for (const [what, re] of required) {
    if (byImage(re).length === 0) problems.push(`[compose] no service runs ${what}`);
  }

  const locus = names.filter((n) => isLocus(svc(n)));
  const targetOf = new Map<string, string>();
  let migrate: string | undefined;
  for (const name of locus) {
    const s = svc(name);
    const w = `[compose] ${name}`;
    const env = { ...imageEnv, ...composeEnv(s) };
    for (const p of locusConfigProblems(env)) problems.push(`${w}: Locus would refuse to start: ${p}`);
    const command = list(s.command).map(String);
    if (command.join(" ").endsWith("cli.ts migrate")) {
      migrate = name;
      continue;
    }
    const targets = (env.LOCUS_TARGETS ?? "all").split(",").map((t) => t.trim());
    const target = targets[0] ?? "";
    if (targets.length !== 1 || !(SPLIT_TARGETS as readonly string[]).includes(target)) {
      problems.push(
        `${w}: LOCUS_TARGETS must name one of ${SPLIT_TARGETS.join(", ")}, got "${targets.join(",")}"`,
      );
    } else if ([...targetOf.values()].includes(target)) {
      problems.push(`${w}: another service already runs ${target}`);
    } else {
      targetOf.set(name, target);
    }
    if (
      !list(at(s, "healthcheck", "test"))
        .map(String)
        .join(" ")
        .includes("/healthz") ||
      !hasHealthcheck(s)
    ) {
      problems.push(`${w}: needs a healthcheck on /healthz`);
    }
    // Only the gateway is public, on 8080.
    const ports = composePorts(s);
    if (target === "gateway") {
      if (!ports.some((p) => p.published === "8080" && p.target === (env.PORT ?? "8080"))) {
        problems.push(`${w}: must publish 8080 to its PORT ${env.PORT ?? "8080"}`);
      }
    } else if (ports.length > 0) {
      problems.push(`${w}: an internal service must not publish ports`);
    }
    // Hosts in the connection settings are services of this file.
    for (const key of [
      "DATABASE_URL",
      "AMQP_URL",
      "REDIS_URL",
      "S3_ENDPOINT",
      "LOCUS_FILES_URL",
      "LOCUS_SEARCH_URL",
    ]) {
      if (!env[key]) continue;
      const host = new URL(env[key]).hostname;
      if (!names.includes(host)) problems.push(`${w}: ${key} points at ${host}, not a service of this file`);
      else if (!text(at(s, "depends_on", host, "condition"))) {
        problems.push(`${w}: ${key} uses ${host}, but depends_on does not wait for it`);
      }
    }
  }
  // Once every service's target is known: the gateway's URLs reach files and search.
  for (const name of locus) {
    const env = composeEnv(svc(name));
    for (const [target, variable] of Object.entries(CALLED_TARGETS)) {
      if (!env[variable]) continue;
      const host = new URL(env[variable]).hostname;
      if (names.includes(host) && targetOf.get(host) !== target) {
        problems.push(
          `[compose] ${name}: ${variable} points at ${host}, which runs ${show(targetOf.get(host))}`,
        );
      }
    }
  }
  for (const t of SPLIT_TARGETS) {
    if (![...targetOf.values()].includes(t)) problems.push(`[compose] no service runs target ${t}`);
  }
  if (!migrate) problems.push(`[compose] no migrate service (cli.ts migrate)`);

  // depends_on: every dependency exists; service_healthy only on services with a healthcheck;
  // the Locus services wait for the migration to finish.
  for (const name of names) {
    for (const [dep, cond] of Object.entries(obj(svc(name).depends_on))) {
      const condition = text(at(cond, "condition"));
      if (!names.includes(dep)) problems.push(`[compose] ${name}: depends on ${dep}, not a service`);
      else if (condition === "service_healthy" && !hasHealthcheck(svc(dep))) {
        problems.push(`[compose] ${name}: waits for ${dep} to be healthy, but it has no healthcheck`);
      } else if (condition === "service_healthy" && list(svc(dep).profiles).length > 0) {
        problems.push(`[compose] ${name}: waits for ${dep}, which only starts with a profile`);
      }
    }
  }
  for (const name of targetOf.keys()) {
    if (migrate && at(svc(name), "depends_on", migrate, "condition") !== "service_completed_successfully") {
      problems.push(`[compose] ${name}: must wait for ${migrate} (condition service_completed_successfully)`);
    }
  }

  // Credentials and the bucket agree between Locus and the servers.
  const anyLocus = composeEnv(svc([...targetOf.keys()][0] ?? ""));
  const pg = byImage(/(^|\/)postgres:/)[0];
  if (pg && anyLocus.DATABASE_URL) {
    const u = new URL(anyLocus.DATABASE_URL);
    const e = composeEnv(svc(pg));
    if (
      decodeURIComponent(u.password) !== e.POSTGRES_PASSWORD ||
      u.username !== (e.POSTGRES_USER ?? "postgres")
    ) {
      problems.push(`[compose] DATABASE_URL's user or password differs from the ${pg} service's`);
    }
  }
  const mq = byImage(/(^|\/)rabbitmq:/)[0];
  if (mq && anyLocus.AMQP_URL) {
    const u = new URL(anyLocus.AMQP_URL);
    const e = composeEnv(svc(mq));
    if (
      decodeURIComponent(u.password) !== e.RABBITMQ_DEFAULT_PASS ||
      u.username !== e.RABBITMQ_DEFAULT_USER
    ) {
      problems.push(`[compose] AMQP_URL's user or password differs from the ${mq} service's`);
    }
  }
  const s3 = byImage(/(^|\/)minio\/minio:/)[0];
  if (s3) {
    const e = composeEnv(svc(s3));
    if (
      anyLocus.S3_ACCESS_KEY_ID !== e.MINIO_ROOT_USER ||
      anyLocus.S3_SECRET_ACCESS_KEY !== e.MINIO_ROOT_PASSWORD
    ) {
      problems.push(
        `[compose] S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY differ from the ${s3} service's credentials`,
      );
    }
    const makesBucket = names.some((n) =>
      [...list(svc(n).entrypoint), ...list(svc(n).command)].some((a) =>
        show(a).includes(`mc mb --ignore-existing local/${anyLocus.S3_BUCKET ?? ""}`),
      ),
    );
    if (!makesBucket)
      problems.push(`[compose] no one-shot service creates the bucket ${anyLocus.S3_BUCKET ?? ""}`);
  }

  if (problems.length === 0) {
    process.stdout.write(`compose: ok (${names.length} services, ${locus.length} from the Locus image)\n`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

const { values } = parseArgs({
  options: {
    k8s: { type: "string", multiple: true, default: [] },
    compose: { type: "string" },
  },
});
const imageEnv = imageEnvironment();
const problems: string[] = [];
if (!imageEnv.PORT) problems.push("deploy/Dockerfile: the final stage sets no PORT");
problems.push(...checkSecretTemplate());
for (const spec of values.k8s) {
  const eq = spec.indexOf("=");
  if (eq <= 0) throw new Error(`--k8s takes label=file, got "${spec}"`);
  problems.push(...checkKubernetes(spec.slice(0, eq), spec.slice(eq + 1), imageEnv));
}
if (values.compose) problems.push(...checkCompose(values.compose, imageEnv));
if (values.k8s.length === 0 && !values.compose)
  throw new Error("nothing to check: give --k8s and/or --compose");

if (problems.length > 0) {
  process.stderr.write(`\n${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}
