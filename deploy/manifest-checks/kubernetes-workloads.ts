// Deployments, Jobs and CronJobs: probes, resources, security, the environment Locus will read.
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import { matches } from "./kubernetes-rendering.ts";
import {
  EMBEDDING_TARGETS,
  EXTRACT_CONCURRENCY_DEFAULT,
  locusConfigProblems,
  MAX_UPLOAD_BYTES_DEFAULT,
  MEDIA_FILE_TARGETS,
  OCR_RECOGNISER_MB,
  OCR_TARGETS,
  OFFICE_CONVERSION_MB,
  OFFICE_CONVERSION_TARGETS,
  OFFICE_TMP_EXTRA,
  OCR_WORKERS_DEFAULT_MAX,
  PDF_READING_TARGETS,
  POSTINGS_CACHE_MB_DEFAULT,
  RECORDING_MB,
  RECORDING_TMP_EXTRA,
  SPEECH_MODEL_MB,
  SPEECH_TARGETS,
  SPLIT_TARGETS,
  TEMPLATE_COMMANDS,
  VECTOR_CACHE_MB_DEFAULT,
  VECTOR_CACHE_TARGETS,
  WORD_VECTORS_MB,
} from "./locus.ts";
import { at, isObj, list, obj, quantity, show, text } from "./yaml.ts";

/** Checks every workload of the rendering; returns its Deployments, for the checks that follow. */
export function checkWorkloads(
  rendering: Rendering,
  imageEnv: Record<string, string>,
  secretKeys: Map<string, Record<string, string>>,
  configMaps: Map<string, Record<string, string>>,
): Workload[] {
  const { label, problems, where, ofKind } = rendering;
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
        problems.push(
          `${cw}: needs a writable /tmp (an emptyDir): the root filesystem is read-only and os.tmpdir() is where libraries write scratch files`,
        );
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
          // A reading thread per PDF in flight, in each target that reads PDFs (an all-in-one
          // process has a pool in each).
          for (const t of PDF_READING_TARGETS.filter(runs)) {
            heaps += concurrency * Number(env.LOCUS_EXTRACT_MAX_HEAP_MB ?? 1024);
            parts.push(`concurrency x LOCUS_EXTRACT_MAX_HEAP_MB for ${t}`);
          }
          // The recognisers are shared by the image extractor, the video one's frames and the
          // scanned pages of PDFs (the PDF extractor's and office documents'): counted once.
          if (OCR_TARGETS.some(runs) || (PDF_READING_TARGETS.some(runs) && env.LOCUS_PDF_OCR !== "false")) {
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
          // Each recording or video in flight runs one pocketsphinx process at a time (recognition,
          // or the forced alignment of Moonshine's words), outside the heap; an all-in-one process
          // takes LOCUS_EXTRACT_CONCURRENCY of each kind at once.
          // The speech model is loaded once per process, whichever of its targets it runs.
          if (SPEECH_TARGETS.some(runs)) {
            heaps += SPEECH_MODEL_MB;
            parts.push(`${SPEECH_MODEL_MB} MB speech model`);
          }
          for (const t of SPEECH_TARGETS.filter(runs)) {
            heaps += concurrency * (RECORDING_MB.pocketsphinx + RECORDING_MB.buffers);
            parts.push(
              `concurrency x (${RECORDING_MB.pocketsphinx} MB pocketsphinx + ` +
                `${RECORDING_MB.buffers} MB buffers) for ${t}`,
            );
          }
          // Each office document in flight has a LibreOffice process of its own, outside the heap.
          for (const t of OFFICE_CONVERSION_TARGETS.filter(runs)) {
            heaps += concurrency * OFFICE_CONVERSION_MB;
            parts.push(`concurrency x ${OFFICE_CONVERSION_MB} MB LibreOffice for ${t}`);
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
      // Deployments only: the operator commands' Jobs run no extractor, whatever LOCUS_TARGETS says.
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

      // Each office document in flight is written whole to /tmp for LibreOffice, which writes its
      // PDF beside it (counted as large again) and a profile of its own.
      if (isDeployment && OFFICE_CONVERSION_TARGETS.some(runs) && tmpLimit !== undefined) {
        const maxUpload = env.LOCUS_MAX_UPLOAD_BYTES?.trim()
          ? Number(env.LOCUS_MAX_UPLOAD_BYTES)
          : MAX_UPLOAD_BYTES_DEFAULT;
        const needed = concurrency * 2 * maxUpload + OFFICE_TMP_EXTRA;
        if (tmpLimit < needed) {
          problems.push(
            `${cw}: /tmp's sizeLimit ${show(tmpSize)} holds less than ` +
              `concurrency x 2 x LOCUS_MAX_UPLOAD_BYTES + ` +
              `${OFFICE_TMP_EXTRA / 2 ** 20} MiB (${Math.ceil(needed / 2 ** 20)} MiB): ` +
              `each office document in flight and its PDF are written there`,
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
        const expected = TEMPLATE_COMMANDS[show(at(o, "metadata", "name"))];
        if (o.kind === "CronJob" && !expected)
          problems.push(
            `${cw}: a CronJob of no known command (${Object.keys(TEMPLATE_COMMANDS).join(", ")})`,
          );
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
  for (const j of ofKind("Job")) {
    problems.push(
      `${where(j)}: a Job's pod template cannot change, so an apply that changes it (a new image, a ` +
        `changed setting) fails while the Job exists: make it a suspended CronJob to run Jobs from`,
    );
  }
  for (const name of Object.keys(TEMPLATE_COMMANDS)) {
    if (!ofKind("CronJob").some((c) => at(c, "metadata", "name") === name))
      problems.push(`[${label}] no CronJob ${name}`);
  }
  return workloads;
}
