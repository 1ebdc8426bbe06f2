// Every metric a Locus process exposes, declared once: its name, help, labels and buckets. Each
// process (or each Locus built in a test's process) has its own registry, so nothing is global.

import { FILE_KINDS, FileFailureCodes, MessageSchemas, type FileStages, type Topic } from "@locus/contracts";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** Seconds: from a fast API answer to a slow search or upload. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds: handling one message, from a deletion to the extraction of a long recording. */
const WORK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** Seconds: one step of an extraction (an image read, a chunk of speech transcribed), to its time limit. */
const STEP_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];

/**
 * The `stage` label of each of a file's stages (the messages' FileStages, camelCase as JSON is):
 * label values are snake_case like every other. Typed on FileStages, so a new stage needs its label.
 */
const STAGE_LABELS: { readonly [Stage in keyof FileStages]-?: string } = {
  waited: "waited",
  extraction: "extraction",
  indexWaited: "index_waited",
  indexing: "indexing",
};

/**
 * The process's metrics. Label values come from small fixed sets (routes as declared, file kinds,
 * failure codes, topics, modes, backends), never from ids or user input, so the series stay few.
 */
export class LocusMetrics {
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: "locus_http_requests_total",
    help: "HTTP requests answered, by method, route (as declared, or `unmatched`) and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: "locus_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer, by method and route.",
    labelNames: ["method", "route"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  private readonly authFailures = new Counter({
    name: "locus_auth_failures_total",
    help: "API requests refused for their key: missing, malformed, unknown or revoked.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: "locus_rate_limited_total",
    help: "API requests refused by the plan's rate limit (429), by plan.",
    labelNames: ["plan"] as const,
    registers: [this.registry],
  });

  private readonly uploads = new Counter({
    name: "locus_uploads_total",
    help: "Files accepted for processing, by kind.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  private readonly filesFinished = new Counter({
    name: "locus_files_finished_total",
    help: "Files that became ready or failed, by kind and outcome (`ready`, or the failure's code).",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });

  private readonly reportsIgnored = new Counter({
    name: "locus_file_reports_ignored_total",
    help: "Pipeline reports that changed no file's status, by topic and reason: duplicate (the same outcome again: a redelivery, a stalled file's second run) or stale (one the file has moved past: late progress, a success after a failure or the reverse).",
    labelNames: ["topic", "reason"] as const,
    registers: [this.registry],
  });

  private readonly publishFailures = new Counter({
    name: "locus_bus_publish_failures_total",
    help: "Messages the bus refused or could not take when first published from the outbox, by topic: each stays in the outbox and is published again.",
    labelNames: ["topic"] as const,
    registers: [this.registry],
  });

  private readonly fileProcessing = new Histogram({
    name: "locus_file_processing_seconds",
    help: "Time from an upload's record to its file ready or failed, by kind and outcome (ready or failed).",
    labelNames: ["kind", "outcome"] as const,
    buckets: WORK_BUCKETS,
    registers: [this.registry],
  });

  private readonly fileStages = new Histogram({
    name: "locus_file_stage_seconds",
    help: `Seconds each stage of a file that became ready took, by kind and stage (${Object.values(STAGE_LABELS).join(", ")}).`,
    labelNames: ["kind", "stage"] as const,
    buckets: WORK_BUCKETS,
    registers: [this.registry],
  });

  private readonly busMessages = new Counter({
    name: "locus_bus_messages_total",
    help: "Bus messages published, and deliveries handled, retried, dead-lettered or handed back at a stop (event), by topic.",
    labelNames: ["topic", "event"] as const,
    registers: [this.registry],
  });

  private readonly messageAge = new Histogram({
    name: "locus_bus_message_age_seconds",
    help: "Age of a message (since first published; to the second on RabbitMQ) when a delivery of it starts, by topic and group.",
    labelNames: ["topic", "group"] as const,
    buckets: WORK_BUCKETS,
    registers: [this.registry],
  });

  private readonly consumerLag = new Gauge({
    name: "locus_bus_consumer_lag_seconds",
    help: "Age of the message whose delivery started last in this process, by group: how far behind the group's consumers are.",
    labelNames: ["group"] as const,
    registers: [this.registry],
  });

  private readonly busHandlerDuration = new Histogram({
    name: "locus_bus_handler_duration_seconds",
    help: "Time a consumer group's handler took over one delivery, by topic, group and outcome.",
    labelNames: ["topic", "group", "outcome"] as const,
    buckets: WORK_BUCKETS,
    registers: [this.registry],
  });

  private readonly searchDuration = new Histogram({
    name: "locus_search_duration_seconds",
    help: "Time to answer a search, by mode, index backend and outcome (ok or error).",
    labelNames: ["mode", "backend", "outcome"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  private readonly searchFallbacks = new Counter({
    name: "locus_search_fallbacks_total",
    help: "ai searches answered with a local engine because the remote one failed, by component.",
    labelNames: ["component"] as const,
    registers: [this.registry],
  });

  private readonly extractedPages = new Counter({
    name: "locus_extracted_pages_total",
    help: "Pages of the files whose extraction succeeded, by kind: a PDF's pages, an image's (one, or each page of a TIFF), an office document's rendition's.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  private readonly extractedAudio = new Counter({
    name: "locus_extracted_audio_seconds_total",
    help: "Seconds of the recordings whose extraction succeeded, by kind (audio, video).",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  private readonly ocrDuration = new Histogram({
    name: "locus_ocr_duration_seconds",
    help: "Time a recogniser took over one image or scanned page (not the wait for a free one; a page of small print is read again scaled up), by engine (native: the tesseract command; wasm: tesseract.js) and outcome (ok or error).",
    labelNames: ["engine", "outcome"] as const,
    buckets: STEP_BUCKETS,
    registers: [this.registry],
  });

  private readonly speechDuration = new Histogram({
    name: "locus_speech_duration_seconds",
    help: "Time the speech-to-text engine took over one chunk of a recording (tens of seconds of sound), by engine and outcome (ok or error).",
    labelNames: ["engine", "outcome"] as const,
    buckets: STEP_BUCKETS,
    registers: [this.registry],
  });

  private readonly speechAudio = new Counter({
    name: "locus_speech_audio_seconds_total",
    help: 'Seconds of sound the speech-to-text engine transcribed (chunks it answered; silent ones are never sent), by engine. Over locus_speech_duration_seconds_sum{outcome="ok"}: the real-time factor.',
    labelNames: ["engine"] as const,
    registers: [this.registry],
  });

  private readonly cpuWait = new Histogram({
    name: "locus_cpu_wait_seconds",
    help: "Time a CPU-heavy job (a speech chunk, an OCR page, a conversion) waited for one of the process's LOCUS_CPU_SLOTS before it ran.",
    buckets: STEP_BUCKETS,
    registers: [this.registry],
  });

  private readonly passagesWritten = new Counter({
    name: "locus_index_passages_written_total",
    help: "Passages written into the search index by the indexer (a file indexed again counts again), by kind.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  private readonly encodedPassages = new Counter({
    name: "locus_passages_encoded_total",
    help: "Passages given vectors by the meaning stage (the encoder group) after their file was ready, by engine.",
    labelNames: ["engine"] as const,
    registers: [this.registry],
  });

  private readonly vectorCacheLookups = new Counter({
    name: "locus_vector_cache_lookups_total",
    help: "Semantic searches' lookups of a user's vectors in memory (LOCUS_VECTOR_CACHE_MB), by result: hit, or miss (read from the database).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });

  private readonly vectorSearches = new Counter({
    name: "locus_vector_searches_total",
    help: "Semantic searches of a user's vectors in memory, by method: approximate (the user's HNSW index, LOCUS_VECTOR_INDEX_MIN vectors or more, once built) or exact (every vector scanned).",
    labelNames: ["method"] as const,
    registers: [this.registry],
  });

  private readonly webhookAttempts = new Histogram({
    name: "locus_webhook_attempt_seconds",
    help: "Time one webhook attempt took (address check, request, answer), by outcome: delivered (a 2xx) or failed (anything else; it is retried while attempts remain).",
    labelNames: ["outcome"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    // CPU, memory, event-loop lag, handles and GC: the standard names (process_*, nodejs_*).
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    // Dead letters are rare, and a counter's series that first appears at 1 shows Prometheus no
    // increase: each topic's starts at 0 in every process, so the first one is seen (LocusDeadLetters).
    for (const topic of Object.keys(MessageSchemas) as Topic[]) {
      this.busMessages.inc({ topic, event: "dead_lettered" }, 0);
    }
  }

  // The observers the services take (HttpObserver, GatewayObserver, FilesObserver, BusObserver,
  // SearchObserver, ExtractionObserver, OcrObserver, SpeechObserver, IndexerObserver,
  // VectorCacheObserver, DeliveryObserver), all answered here: the services know nothing of Prometheus.

  requestAnswered(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  webhookAttempted(outcome: "delivered" | "failed", seconds: number): void {
    this.webhookAttempts.observe({ outcome }, seconds);
  }

  keyRefused(reason: string): void {
    this.authFailures.inc({ reason });
  }

  rateLimitRefused(plan: string): void {
    this.rateLimited.inc({ plan });
  }

  uploadAccepted(kind: string): void {
    this.uploads.inc({ kind });
  }

  /**
   * Starts locus_files_finished_total at 0 for every kind and outcome (`ready`, each failure code),
   * in the process that finishes files (the files service): a failure code's first file would
   * otherwise appear at 1, which rate() and increase() read as no change. Kinds × (1 + failure
   * codes) series: a bounded set, and only this process carries them.
   */
  countFileOutcomesFromZero(): void {
    for (const kind of FILE_KINDS) {
      for (const outcome of ["ready", ...FileFailureCodes]) this.filesFinished.inc({ kind, outcome }, 0);
    }
  }

  fileFinished(kind: string, outcome: string, seconds: number): void {
    this.filesFinished.inc({ kind, outcome });
    this.fileProcessing.observe({ kind, outcome: outcome === "ready" ? "ready" : "failed" }, seconds);
  }

  reportIgnored(topic: string, reason: "duplicate" | "stale"): void {
    this.reportsIgnored.inc({ topic, reason });
  }

  publishFailed(topic: string): void {
    this.publishFailures.inc({ topic });
  }

  stagesTook(kind: string, stages: FileStages): void {
    for (const [stage, seconds] of Object.entries(stages) as [keyof FileStages, number | undefined][]) {
      if (seconds !== undefined) this.fileStages.observe({ kind, stage: STAGE_LABELS[stage] }, seconds);
    }
  }

  messagePublished(topic: string): void {
    this.busMessages.inc({ topic, event: "published" });
  }

  deliveryStarted(topic: string, group: string, ageSeconds: number | undefined): void {
    if (ageSeconds === undefined) return;
    this.messageAge.observe({ topic, group }, ageSeconds);
    this.consumerLag.set({ group }, ageSeconds);
  }

  cpuWaited(seconds: number): void {
    this.cpuWait.observe(seconds);
  }

  /** Reports the process's CPU slots in use and the jobs waiting for one, read at each scrape. */
  watchCpuSlots(stats: () => { running: number; waiting: number }): void {
    new Gauge({
      name: "locus_cpu_jobs",
      help: "CPU-heavy jobs of this process holding one of its LOCUS_CPU_SLOTS (state running) or waiting for one (waiting), read at each scrape.",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        const { running, waiting } = stats();
        this.set({ state: "running" }, running);
        this.set({ state: "waiting" }, waiting);
      },
    });
  }

  /**
   * Reports the depth of each queue `depths` names, read at every scrape. One process reports
   * every consumer group's queue, and it is not their consumer (the files service): a group whose
   * consumers are gone or hung still has its depth, which LocusQueueBacklog and the KEDA triggers
   * need most then. A broker that cannot answer for a queue leaves its series out rather than
   * failing the scrape.
   */
  watchQueues(depths: () => Promise<Record<string, number>>): void {
    new Gauge({
      name: "locus_bus_queue_depth",
      help: "Messages waiting in each consumer group's queue (not those being handled), read by the files service at each scrape.",
      labelNames: ["group"] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [group, depth] of Object.entries(await depths())) this.set({ group }, depth);
      },
    });
  }

  /**
   * Reports the files left unfinished (pending or processing) with no word from the pipeline for
   * the stall delay, counted at every scrape (the files service's). Recovery queues them again; a
   * count that stays up means the pipeline cannot finish them.
   */
  watchStalledFiles(count: () => Promise<number>): void {
    new Gauge({
      name: "locus_files_stalled",
      help: "Files pending or processing with no progress for the stall delay (LOCUS_STALLED_AFTER_S), up to 1,000, read at each scrape.",
      registers: [this.registry],
      async collect() {
        this.set(await count());
      },
    });
  }

  deliveryEnded(topic: string, group: string, outcome: string, seconds: number): void {
    this.busMessages.inc({ topic, event: outcome });
    this.busHandlerDuration.observe({ topic, group, outcome }, seconds);
  }

  deliveryAbandoned(topic: string): void {
    this.busMessages.inc({ topic, event: "dead_lettered" });
  }

  searchAnswered(mode: string, backend: string, outcome: string, seconds: number): void {
    this.searchDuration.observe({ mode, backend, outcome }, seconds);
  }

  searchFellBack(component: string): void {
    this.searchFallbacks.inc({ component });
  }

  fileExtracted(kind: string, summary: { pageCount: number | null; durationS?: number }): void {
    if (summary.pageCount !== null) this.extractedPages.inc({ kind }, summary.pageCount);
    if (summary.durationS !== undefined) this.extractedAudio.inc({ kind }, summary.durationS);
  }

  imageRecognised(engine: string, outcome: "ok" | "error", seconds: number): void {
    this.ocrDuration.observe({ engine, outcome }, seconds);
  }

  chunkTranscribed(engine: string, outcome: "ok" | "error", seconds: number, audioSeconds: number): void {
    this.speechDuration.observe({ engine, outcome }, seconds);
    if (outcome === "ok") this.speechAudio.inc({ engine }, audioSeconds);
  }

  passagesIndexed(kind: string, count: number): void {
    this.passagesWritten.inc({ kind }, count);
  }

  passagesEncoded(engine: string, count: number): void {
    this.encodedPassages.inc({ engine }, count);
  }

  vectorCacheLookedUp(result: "hit" | "miss"): void {
    this.vectorCacheLookups.inc({ result });
  }

  vectorSearched(method: "approximate" | "exact"): void {
    this.vectorSearches.inc({ method });
  }

  /** The text a Prometheus scrape reads. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
