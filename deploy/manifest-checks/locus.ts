// What Locus expects of a deployment: targets, queues, memory and /tmp figures, image env, config rules.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { EXTRACTOR_TARGETS, extractorTargetsRunning } from "../../packages/contracts/src/kinds.ts";
import { ConfigError, loadConfig, TARGETS } from "../../packages/runtime/src/config.ts";

const repoFile = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** Every target that runs as its own Deployment / compose service (all but `all`). */
export const SPLIT_TARGETS = TARGETS.filter((t) => t !== "all");
/**
 * Targets a deployment runs only with a setting that turns their stage on: the encoder runs the
 * meaning stage, which needs LOCUS_EMBEDDER=encoder (Locus's own configuration check refuses the
 * target without it, and runs on every workload's environment).
 */
export const OPT_IN_TARGETS: readonly string[] = ["encoder"];
/** Targets every deployment must run. */
export const REQUIRED_TARGETS = SPLIT_TARGETS.filter((t) => !OPT_IN_TARGETS.includes(t));

/**
 * The targets a deployment whose Locus processes have these environments must run: every
 * required one, and the encoder when any of them turns the meaning stage on (its files would
 * otherwise wait for their vectors for ever). An environment Locus would refuse counts for
 * nothing here: its own problem is reported.
 */
export function requiredTargets(envs: Iterable<Record<string, string>>): string[] {
  const meaningStage = [...envs].some((env) => {
    try {
      return loadConfig(env).meaningStage;
    } catch (err) {
      if (err instanceof ConfigError) return false;
      throw err;
    }
  });
  return meaningStage ? [...REQUIRED_TARGETS, "encoder"] : [...REQUIRED_TARGETS];
}

/**
 * Consumer groups, hence RabbitMQ queue names, of the targets that work through a queue: each
 * extractor's group is named as its target (EXTRACTORS), as are the indexer's and the encoder's.
 */
export const QUEUE_GROUPS: Record<string, string> = Object.fromEntries(
  [...EXTRACTOR_TARGETS, "indexer", "encoder"].map((target) => [target, target]),
);
/** Targets other processes call over HTTP: each needs a Service (k8s) and a URL on the gateway. */
export const CALLED_TARGETS: Record<string, string> = {
  files: "LOCUS_FILES_URL",
  search: "LOCUS_SEARCH_URL",
  webhooks: "LOCUS_WEBHOOKS_URL",
};
/** The Secret's keys, with placeholders; the manifests expect a Secret of that name and keys. */
export const SECRET_TEMPLATE = repoFile("k8s/base/secret.example.yaml");
export const HPA_TARGETS = ["gateway", "search"];
/**
 * What every Deployment's pods spread over (topologySpreadConstraints, as preferences: a cluster of
 * one zone or one node still schedules them), broadest first: a zone's loss, then a node's.
 */
export const SPREAD_TOPOLOGY_KEYS = ["topology.kubernetes.io/zone", "kubernetes.io/hostname"];
/**
 * Renderings that run an image loaded by hand into a local cluster (kind, minikube): k8s/base. Every
 * other one runs images from a registry, which must be pinned by digest.
 */
export const LOCAL_RENDERINGS: readonly string[] = ["base"];
/**
 * Targets scaled by KEDA on their queue (QUEUE_GROUPS): its depth (a rabbitmq trigger) and how long
 * the files started last had waited (a prometheus trigger on LAG_METRIC of their group).
 */
export const KEDA_TARGETS: readonly string[] = [...EXTRACTOR_TARGETS, "encoder"];
/** The metric the prometheus triggers scale on, and where Locus's metrics are declared. */
export const LAG_METRIC = "locus_bus_consumer_lag_seconds";
export const METRICS_SOURCE = repoFile("packages/metrics/src/metrics.ts");
/** The ConfigMap of k8s/base/keda.env, and its setting kustomize copies into serverAddress. */
export const KEDA_SETTINGS = { configMap: "locus-keda", serverAddress: "PROMETHEUS_SERVER_ADDRESS" };
/**
 * What a SIGTERM must be given to finish the longest file allowed (LOCUS_MEDIA_MAX_DURATION_S),
 * in seconds per second of it: the bus waits for the file in flight with no deadline of its own,
 * so terminationGracePeriodSeconds is the limit. Twice the measured speeds (pocketsphinx 0.14-0.25
 * of a recording's length, a video's frames 0.13: README, bench/README), as a pod may get only its
 * CPU request, half a core; a video is transcribed, then its frames read. Plus SHUTDOWN_MARGIN_S
 * for reading the file, ffmpeg and publishing.
 */
export const SHUTDOWN_SECONDS_PER_MEDIA_SECOND: Record<string, number> = {
  "extractor-audio": 0.5,
  "extractor-video": 0.5 + 0.25,
};
export const SHUTDOWN_MARGIN_S = 300;
/** The HPA's own scale-in stabilization when none is set, in seconds. */
export const HPA_DEFAULT_SCALE_DOWN_WINDOW_S = 300;
/** Memory of one OCR recogniser (a tesseract.js thread with its own copy of the model), in MB. */
export const OCR_RECOGNISER_MB = 250;
/** LOCUS_OCR_WORKERS's default is min(4, the node's cores): counted at its most when unset. */
export const OCR_WORKERS_DEFAULT_MAX = 4;
/**
 * Memory of one recording (or video's sound track) in flight, in MB: its pocketsphinx process
 * (~150 MB on a 40 s chunk of speech; counted whatever LOCUS_SPEECH_ENGINE says, so switching back
 * needs no resizing) and the buffers around it (ffmpeg, the chunks).
 */
export const RECORDING_MB = { pocketsphinx: 150, buffers: 50 };
/**
 * Memory of the Moonshine speech model, once per process that transcribes, in MB: ONNX Runtime's
 * copy of its weights (~400 MB resident once loaded) and the working memory it keeps after
 * utterances of up to 20 s (~100 MB); measured as the resident size of a process after three
 * 40 s chunks. Counted whatever LOCUS_SPEECH_ENGINE says, as the model is the default.
 */
export const SPEECH_MODEL_MB = 500;
/** Targets that transcribe sound, each LOCUS_EXTRACT_CONCURRENCY files at a time. */
export const SPEECH_TARGETS: readonly string[] = extractorTargetsRunning("speech");
/**
 * Memory of ai search's word vectors (the local embedder, ~100 MB resident once loaded), in MB:
 * every process that embeds loads them at start, whatever LOCUS_EMBEDDER says.
 */
export const WORD_VECTORS_MB = 100;
/** Targets that load the word vectors: the indexer embeds passages, search embeds questions. */
export const EMBEDDING_TARGETS = ["indexer", "search"];
/** Targets that keep users' passage vectors in memory between searches (LOCUS_VECTOR_CACHE_MB). */
export const VECTOR_CACHE_TARGETS = ["search"];
/** Default of LOCUS_VECTOR_CACHE_MB (packages/runtime/src/config.ts). */
export const VECTOR_CACHE_MB_DEFAULT = 256;
/** Default of LOCUS_POSTINGS_CACHE_MB, held by the same targets when the search index is Postgres. */
export const POSTINGS_CACHE_MB_DEFAULT = 128;
/**
 * The suspended CronJobs, templates of the operator commands' runs (each run a Job made from one),
 * by name, with the CLI command each runs. No Job is rendered: a Job's pod template cannot change,
 * so a second apply that changed it (a new image, a changed setting) would fail.
 */
export const TEMPLATE_COMMANDS: Record<string, { command: RegExp; what: string }> = {
  "locus-migrate": { command: /cli\.[jt]s migrate$/, what: "the migrate command" },
  "locus-index-rebuild": { command: /cli\.[jt]s index rebuild$/, what: "the index rebuild command" },
};
/**
 * Targets that read PDFs in a worker thread of LOCUS_EXTRACT_MAX_HEAP_MB, one per file in flight,
 * with the OCR recognisers for pages without a text layer (LOCUS_PDF_OCR): the PDF extractor, and
 * the document extractor for the PDFs LibreOffice makes of office documents.
 */
export const PDF_READING_TARGETS: readonly string[] = extractorTargetsRunning("pdf");
/** Targets that run the OCR recognisers on every file (images, a video's frames). */
export const OCR_TARGETS: readonly string[] = extractorTargetsRunning("ocr");
/** Targets that convert each office document in flight with a LibreOffice (soffice) process of its own. */
export const OFFICE_CONVERSION_TARGETS: readonly string[] = extractorTargetsRunning("office");
/**
 * Memory of one LibreOffice conversion, in MB: ~1 GiB at worst (a large spreadsheet, a
 * presentation full of pictures; measured: 240 MB resident on a 1,100-page DOCX, 500 MB two minutes
 * into a 6,000-page one, when LOCUS_CONVERT_TIMEOUT_MS stops it), outside the heap.
 */
export const OFFICE_CONVERSION_MB = 1024;
/**
 * /tmp beyond the office documents in flight (each written whole, with its PDF counted as large
 * again), in bytes: each conversion's LibreOffice profile (~1 MB) and temporary files.
 */
export const OFFICE_TMP_EXTRA = 32 * 2 ** 20;
/**
 * Targets whose outgoing connections a NetworkPolicy must limit (LibreOffice parses untrusted
 * documents, which can link to other hosts): to the ports of what they run on, never plain HTTP.
 */
export const EGRESS_LIMITED_TARGETS: readonly string[] = OFFICE_CONVERSION_TARGETS;
/** Ports an egress-limited pod must never be allowed to: plain HTTP, what linked content uses. */
export const FORBIDDEN_EGRESS_PORTS = [80];
/** Targets that write each file in flight whole to /tmp (os.tmpdir()) for ffmpeg. */
export const MEDIA_FILE_TARGETS: readonly string[] = extractorTargetsRunning("ffmpeg");
/** Defaults of LOCUS_EXTRACT_CONCURRENCY and LOCUS_MAX_UPLOAD_BYTES (packages/runtime/src/config.ts). */
export const EXTRACT_CONCURRENCY_DEFAULT = 2;
export const MAX_UPLOAD_BYTES_DEFAULT = 100 * 2 ** 20;
/** /tmp beyond the recordings and videos in flight, in bytes: sound chunks as WAVs (~1.3 MB). */
export const RECORDING_TMP_EXTRA = 32 * 2 ** 20;

/** ENV of the image's final stage (deploy/Dockerfile): what every container starts with. */
export function imageEnvironment(): Record<string, string> {
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
export function locusConfigProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

/** LOCUS_MEDIA_MAX_DURATION_S as Locus reads it (its default when unset); undefined if it would not start. */
export function mediaMaxDurationS(env: Record<string, string>): number | undefined {
  try {
    return loadConfig(env).speech.maxDurationS;
  } catch (err) {
    if (err instanceof ConfigError) return undefined;
    throw err;
  }
}
