import { availableParallelism } from "node:os";
import { z } from "zod";
import { WEBHOOK_LIMITS } from "@locus/contracts";
import {
  baseUrl,
  flag,
  httpUrl,
  integer,
  MB,
  NONE,
  ocrLanguages,
  SDK_CHAIN,
  secret,
  setting,
  settingMeta,
  targets,
  text,
  trustProxy,
  unset,
  retrySchedule,
  webhookAddressKinds,
  type Setting,
  type Target,
  TARGETS,
} from "./config-values.ts";

export {
  TARGETS,
  WEBHOOK_ADDRESS_KINDS,
  type Setting,
  type SettingMeta,
  type Target,
  type WebhookAddressKind,
} from "./config-values.ts";

/**
 * The only place that reads process.env. Every setting is validated once at start; a bad value
 * stops the process with one message that names every problem.
 *
 * One zod schema over the environment: each setting is declared once, where it lands in
 * LocusConfig, with its variable, its parsing (the parsers are in config-values.ts), its default
 * and a line saying what it does. The README's configuration table is checked against these
 * declarations (test/readme-config.test.ts).
 */
export type Plan = "free" | "pro" | "enterprise";

/**
 * What reads meaning for ai search when LOCUS_EMBEDDER is unset: the offline sentence encoder
 * (all-MiniLM-L6-v2, fetched by `pnpm install`). Exported for the launchers, which decide from the
 * environment alone whether to start the encoder target.
 */
export const DEFAULT_EMBEDDER = "encoder";

/** The variable that names the shape (read before the others: it decides the adapters' defaults). */
const SHAPE_ENV = "LOCUS_SHAPE";

/** Every setting, where it lands in LocusConfig. */
const Settings = z.object({
  host: setting("HOST", "127.0.0.1", text(), "Address to listen on."),
  port: integer("PORT", 8080, [0, 65535], "HTTP port (0 picks a free one)."),
  metricsPort: setting(
    "LOCUS_METRICS_PORT",
    unset("/metrics on PORT, except where the gateway runs"),
    z.coerce.number().int().min(0).max(65535).optional(),
    "A second port that serves only /metrics, on HOST (0 picks a free one).",
  ),
  dataDir: setting("LOCUS_DATA_DIR", "./data", text(), "Where the embedded shape keeps its files."),
  /**
   * Which shape this process belongs to: `split` makes the shared adapters the defaults (see
   * `splitDefault` on the adapters below) and requires each one's connection settings, so a
   * process (or the operator CLI) given only part of a split deployment's settings stops and says
   * what is missing instead of running on embedded parts of its own.
   */
  shape: setting(
    SHAPE_ENV,
    "embedded",
    z.enum(["embedded", "split"]),
    "embedded (one process, its parts in the data dir) or split (every part shared: the adapters default to postgres, rabbitmq, s3 and redis, and need their connection settings).",
  ),
  targets: setting("LOCUS_TARGETS", "all", targets, "Modules this process runs, comma-separated."),
  publicUrl: setting(
    "LOCUS_PUBLIC_URL",
    unset("from the request's Host"),
    baseUrl(),
    "Base of the links Locus hands out (preview URLs).",
  ),
  trustProxy: setting(
    "LOCUS_TRUST_PROXY",
    NONE,
    trustProxy,
    "Proxies whose X-Forwarded-For/-Proto are believed: a number of hops, or their addresses.",
  ),
  signingSecret: setting(
    "LOCUS_SIGNING_SECRET",
    unset("generated into the data dir"),
    secret,
    "Signs preview links and sessions; several processes serving links need the same.",
  ),
  maxUploadBytes: integer("LOCUS_MAX_UPLOAD_BYTES", 100 * MB, [1], "Largest accepted upload."),
  rateLimits: z.object({
    free: integer("LOCUS_RATE_LIMIT_FREE", 5, [1], "Requests a second per free account."),
    pro: integer("LOCUS_RATE_LIMIT_PRO", 50, [1], "Requests a second per pro account."),
    enterprise: integer("LOCUS_RATE_LIMIT_ENTERPRISE", 500, [1], "Requests a second per enterprise account."),
  }),
  /** Live uploads per calendar month (UTC); 0 means unlimited. */
  monthlyUploadQuota: z.object({
    free: integer("LOCUS_QUOTA_FREE", 100, [0], "Live uploads a month per free account."),
    pro: integer("LOCUS_QUOTA_PRO", 10_000, [0], "Live uploads a month per pro account."),
    enterprise: integer("LOCUS_QUOTA_ENTERPRISE", 0, [0], "Live uploads a month per enterprise account."),
  }),
  extractConcurrency: integer("LOCUS_EXTRACT_CONCURRENCY", 2, [1, 64], "Files one process extracts at once."),
  /**
   * CPU-heavy child processes (the speech recogniser, the tesseract command, LibreOffice) a process
   * runs at once, whatever its extractors: taken in turn by the files in hand, so a short file is not stuck
   * behind a long one's pages.
   */
  cpuSlots: integer(
    "LOCUS_CPU_SLOTS",
    { default: availableParallelism(), unset: "cores" },
    [1, 256],
    "CPU-heavy child processes one process runs at once, shared in turn by the files in hand.",
  ),
  maxAttempts: integer("LOCUS_MAX_ATTEMPTS", 3, [1, 20], "Deliveries of a message before its file fails."),
  /**
   * Split shape: a file left `pending` or `processing` this long without a word is published again
   * (a message lost with a crashed process, an upload whose announcement never went out).
   */
  stalledAfterMs: integer(
    "LOCUS_STALLED_AFTER_S",
    600,
    [5],
    "Seconds a file may sit pending or processing before it is published again.",
  ).transform((s) => s * 1000),
  pdfPageTimeoutMs: integer(
    "LOCUS_PDF_PAGE_TIMEOUT_MS",
    60_000,
    [100],
    "One PDF page taking longer fails its file (stuck or hostile PDFs).",
  ),
  /**
   * What reads PDFs' text layers: Poppler's tools (`poppler-utils`) with pdf.js taking over where
   * they fail, or pdf.js alone; `auto`: Poppler when installed.
   */
  pdfEngine: setting(
    "LOCUS_PDF_ENGINE",
    "auto",
    z.enum(["auto", "poppler", "pdfjs"]),
    "What reads PDFs' text layers: Poppler's tools, pdf.js, or auto.",
  ),
  extractMaxHeapMb: integer(
    "LOCUS_EXTRACT_MAX_HEAP_MB",
    1024,
    [64],
    "Heap of one extraction thread; a file needing more fails, not the process.",
  ),
  ocr: z.object({
    /**
     * Which Tesseract reads images: `native`, the tesseract command (Debian's tesseract-ocr), one
     * process per image; `wasm`, tesseract.js, which needs nothing installed; `auto`: native when
     * the command works.
     */
    engine: setting(
      "LOCUS_OCR_ENGINE",
      "auto",
      z.enum(["auto", "native", "wasm"]),
      "Which Tesseract reads images: the tesseract command (native), tesseract.js (wasm), or auto.",
    ),
    tesseractPath: setting(
      "LOCUS_TESSERACT_PATH",
      "tesseract",
      text(),
      "The tesseract command: a path, or a name looked up on PATH.",
    ),
    models: setting(
      "LOCUS_OCR_MODELS",
      "auto",
      z.enum(["auto", "system", "packaged"]),
      "Where OCR models come from: the tesseract command's own (system), the npm packages', or auto.",
    ),
    /** Each read with the tesseract command's own model, or its @tesseract.js-data/<code> package's. */
    languages: setting("LOCUS_OCR_LANGUAGES", "eng", ocrLanguages, "Tesseract language codes joined by '+'."),
    /** Recognisers: tesseract processes, or tesseract.js threads of ~150 MB each. */
    workers: integer(
      "LOCUS_OCR_WORKERS",
      { default: Math.min(4, Math.max(1, availableParallelism())), unset: "min(4, cores)" },
      [1, 64],
      "Images read at once by the image and PDF extractors of a process.",
    ),
    timeoutMs: integer(
      "LOCUS_OCR_TIMEOUT_MS",
      120_000,
      [100],
      "Processor time one image or page may use (wall-clock time for tesseract.js).",
    ),
    /** Lines read with less confidence than this (0–1) are dropped as noise. */
    minConfidence: integer(
      "LOCUS_OCR_MIN_CONFIDENCE",
      50,
      [0, 100],
      "Lines read with less confidence (0–100) are dropped as noise.",
    ).transform((percent) => percent / 100),
    maxImagePixels: integer(
      "LOCUS_IMAGE_MAX_PIXELS",
      100_000_000,
      [1_000_000, 1_000_000_000],
      "An image page with more pixels is refused (decompression bombs).",
    ),
    pdfScans: setting("LOCUS_PDF_OCR", "true", flag(), "Read PDF pages without a real text layer by OCR."),
    pdfDpi: integer("LOCUS_PDF_OCR_DPI", 200, [72, 600], "Resolution PDF pages are drawn at for OCR."),
  }),
  speech: z.object({
    engine: setting(
      "LOCUS_SPEECH_ENGINE",
      unset("the best offline engine installed: moonshine, else pocketsphinx"),
      z.enum(["moonshine", "pocketsphinx", "openai"]).optional(),
      "Speech to text: moonshine (offline, its model fetched by `pnpm install`), pocketsphinx (offline, Debian's) or openai.",
    ),
    modelDir: setting(
      "LOCUS_SPEECH_MODEL_DIR",
      unset("`packages/speech-to-text/models`"),
      text().optional(),
      "Where the Moonshine speech model is (`pnpm install` fetches it there).",
    ),
    pocketsphinxModelDir: setting(
      "LOCUS_POCKETSPHINX_MODEL_DIR",
      "/usr/share/pocketsphinx/model/en-us",
      text(),
      "Where Debian's pocketsphinx-en-us put the English model.",
    ),
    maxDurationS: integer("LOCUS_MEDIA_MAX_DURATION_S", 4 * 3600, [1], "Longest recording, in seconds."),
    ffmpegPath: setting(
      "LOCUS_FFMPEG_PATH",
      unset("Debian's, else the npm package's"),
      text().optional(),
      "The ffmpeg that reads recordings and videos.",
    ),
  }),
  /** Office documents: converted to PDF by LibreOffice in a child process of their own, then read as PDFs. */
  documents: z.object({
    sofficePath: setting(
      "LOCUS_SOFFICE_PATH",
      unset("found on PATH"),
      text().optional(),
      "LibreOffice's soffice, which converts office documents to PDF.",
    ),
    convertTimeoutMs: integer(
      "LOCUS_CONVERT_TIMEOUT_MS",
      120_000,
      [1000],
      "Processor time one office document's conversion to PDF may use.",
    ),
    convertMemoryMb: integer(
      "LOCUS_CONVERT_MEMORY_MB",
      4096,
      [512],
      "Address space one LibreOffice conversion may use, in MiB.",
    ),
    /**
     * Documents carrying macros (VBA, LibreOffice Basic): refused by default; `ignore` reads their
     * text all the same. Either way no macro ever runs: the converter's profile forbids them.
     */
    macros: setting(
      "LOCUS_DOCUMENT_MACROS",
      "refuse",
      z.enum(["refuse", "ignore"]),
      "Office documents with macros: refused (refuse), or read with the macros never run (ignore).",
    ),
  }),
  /** Any OpenAI-compatible server, for the engines that use one. */
  openai: z.object({
    baseUrl: setting(
      "OPENAI_BASE_URL",
      "https://api.openai.com/v1",
      httpUrl().transform((url) => url.replace(/\/+$/, "")),
      "The OpenAI-compatible server.",
    ),
    apiKey: setting("OPENAI_API_KEY", NONE, text().optional(), "The server's key."),
    transcribeModel: setting(
      "LOCUS_OPENAI_TRANSCRIBE_MODEL",
      "whisper-1",
      text(),
      "The transcription model of LOCUS_SPEECH_ENGINE=openai.",
    ),
    timeoutMs: integer("LOCUS_OPENAI_TIMEOUT_MS", 60_000, [100], "Time limit of one request."),
    maxRetries: integer("LOCUS_OPENAI_MAX_RETRIES", 2, [0, 10], "Retries of one request."),
    embedModel: setting("LOCUS_OPENAI_EMBED_MODEL", "text-embedding-3-small", text(), "The embedding model."),
    embedDimensions: setting(
      "LOCUS_OPENAI_EMBED_DIMENSIONS",
      unset("the model's"),
      z.coerce.number().int().min(1).max(8192).optional(),
      "Shorter vectors asked of the embedding model (text-embedding-3 takes it).",
    ),
    chatModel: setting("LOCUS_OPENAI_CHAT_MODEL", "gpt-4o-mini", text(), "The summaries' chat model."),
  }),
  /** ai search: which engines, and how long a search waits for a remote one. */
  ai: z.object({
    embedder: setting(
      "LOCUS_EMBEDDER",
      DEFAULT_EMBEDDER,
      z.enum(["local", "encoder", "openai"]),
      "What makes passage and question vectors: local word vectors, the offline sentence encoder, or openai.",
    ),
    modelsDir: setting(
      "LOCUS_MODELS_DIR",
      unset("`packages/embedder/models`"),
      text().optional(),
      "Where the sentence encoder's files are (`pnpm install` fetches them there).",
    ),
    summarizer: setting(
      "LOCUS_SUMMARIZER",
      "local",
      z.enum(["local", "openai"]),
      "What writes the ai summary: local (extractive) or openai (a chat model).",
    ),
    timeoutMs: integer(
      "LOCUS_AI_TIMEOUT_MS",
      8_000,
      [100],
      "Time limit of a remote call a search waits on (the question's vector, the summary).",
    ),
    maxRetries: integer("LOCUS_AI_MAX_RETRIES", 1, [0, 10], "Retries of a remote call a search waits on."),
    wordVectorsPath: setting(
      "LOCUS_WORD_VECTORS_PATH",
      unset("`packages/embedder/models/…`"),
      text().optional(),
      "The converted word vectors; unset: beside @locus/embedder, made on first use.",
    ),
    vectorCacheBytes: integer(
      "LOCUS_VECTOR_CACHE_MB",
      256,
      [0, 65_536],
      "Memory for users' passage vectors kept between searches (SQLite and Postgres indexes).",
    ).transform((mb) => mb * MB),
    approximateIndexMinVectors: integer(
      "LOCUS_VECTOR_INDEX_MIN",
      10_000,
      [0, 1_000_000_000],
      "Vectors of one user from which ai search keeps an approximate (HNSW) index of them instead of scanning them all (SQLite and Postgres indexes); 0: always scan.",
    ),
  }),
  signUpsPerHour: integer("LOCUS_SIGNUPS_PER_HOUR", 10, [1], "Sign-ups one client address may make an hour."),
  logLevel: setting(
    "LOCUS_LOG_LEVEL",
    "info",
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    "The least severe log lines written.",
  ),
  /**
   * Traces (OpenTelemetry), off unless an OTLP endpoint is set: then `url` is where spans are
   * posted (see startTracing in @locus/telemetry). OpenTelemetry's other variables (headers,
   * sampler, resource attributes…) are read by its SDK itself.
   */
  tracing: z
    .object({
      endpoint: setting(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        NONE,
        httpUrl().optional(),
        "An OTLP/HTTP collector (port 4318): traces go to its /v1/traces. Unset, with the next: no traces.",
      ),
      tracesEndpoint: setting(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        NONE,
        httpUrl().optional(),
        "The whole URL traces are posted to, instead of the endpoint's /v1/traces.",
      ),
      protocol: setting(
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "http/protobuf",
        z.enum(["http/protobuf", "http/json"], {
          error: "must be http/protobuf or http/json (grpc is not supported: use the collector's HTTP port)",
        }),
        "How spans are encoded: http/protobuf or http/json.",
      ),
    })
    .transform(({ endpoint, tracesEndpoint, protocol }) => ({
      url: tracesEndpoint ?? (endpoint ? `${endpoint.replace(/\/+$/, "")}/v1/traces` : undefined),
      protocol,
    })),
  adapters: z.object({
    metadataStore: setting(
      "LOCUS_METADATA_STORE",
      { default: "sqlite", splitDefault: "postgres" },
      z.enum(["sqlite", "postgres"]),
      "Where records live: sqlite (the data dir) or postgres.",
    ),
    blobStore: setting(
      "LOCUS_BLOB_STORE",
      { default: "local", splitDefault: "s3" },
      z.enum(["local", "s3"]),
      "Where uploaded bytes live.",
    ),
    bus: setting(
      "LOCUS_BUS",
      { default: "memory", splitDefault: "rabbitmq" },
      z.enum(["memory", "rabbitmq"]),
      "How modules pass messages.",
    ),
    searchIndex: setting(
      "LOCUS_SEARCH_INDEX",
      { default: "sqlite", splitDefault: "postgres" },
      z.enum(["sqlite", "postgres", "elasticsearch"]),
      "Where passages are indexed: sqlite, postgres or elasticsearch.",
    ),
    rateLimitStore: setting(
      "LOCUS_RATE_LIMIT_STORE",
      { default: "memory", splitDefault: "redis" },
      z.enum(["memory", "redis"]),
      "Where rate limits and sign-in counts are kept: per process, or shared in Redis.",
    ),
  }),
  /** Set when DATABASE_URL is (a Postgres adapter needs it). */
  postgres: z
    .object({
      url: setting(
        "DATABASE_URL",
        NONE,
        z.url({ protocol: /^postgres(ql)?$/ }).optional(),
        "PostgreSQL, for records and the index.",
      ),
      schema: setting(
        "LOCUS_DATABASE_SCHEMA",
        unset("`public`"),
        z
          .string()
          .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case SQL identifier")
          .optional(),
        "The schema of Locus's tables: several deployments can share a database.",
      ),
      postingsCacheBytes: integer(
        "LOCUS_POSTINGS_CACHE_MB",
        128,
        [0, 65_536],
        "Memory for users' postings kept between quick searches (Postgres index).",
      ).transform((mb) => mb * MB),
    })
    .transform(({ url, ...rest }) => (url ? { url, ...rest } : undefined)),
  /** Kept only when LOCUS_SEARCH_INDEX=elasticsearch (see LocusConfigSchema). */
  elasticsearch: z.object({
    node: setting("ELASTICSEARCH_URL", NONE, httpUrl().optional(), "A node of the cluster."),
    cloudId: setting("ELASTICSEARCH_CLOUD_ID", NONE, text().optional(), "An Elastic Cloud id."),
    apiKey: setting("ELASTICSEARCH_API_KEY", NONE, text().optional(), "The cluster's API key."),
    username: setting("ELASTICSEARCH_USERNAME", NONE, text().optional(), "Basic auth's user."),
    password: setting("ELASTICSEARCH_PASSWORD", NONE, text().optional(), "Basic auth's password."),
    caCertPath: setting("ELASTICSEARCH_CA_CERT", NONE, text().optional(), "The cluster's CA (PEM file)."),
    requestTimeoutMs: integer("ELASTICSEARCH_REQUEST_TIMEOUT_MS", 10_000, [100], "One request's time limit."),
    maxRetries: integer("ELASTICSEARCH_MAX_RETRIES", 3, [0, 20], "Retries of one request."),
    indexPrefix: setting(
      "LOCUS_ES_INDEX_PREFIX",
      "locus-passages",
      z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,100}$/, "must be a lower-case index name"),
      "The alias Locus reads and writes.",
    ),
  }),
  amqpUrl: setting("AMQP_URL", NONE, z.url({ protocol: /^amqps?$/ }).optional(), "The RabbitMQ broker."),
  amqpPrefix: setting(
    "LOCUS_AMQP_PREFIX",
    "",
    z.string().regex(/^[a-z0-9_.-]*$/, "may hold only a-z, 0-9, '_', '.' and '-'"),
    "Put before every exchange and queue name: deployments sharing a vhost stay apart.",
  ),
  /** The work queues on RabbitMQ (see WorkQueueSettings in @locus/bus). */
  busQueueType: setting(
    "LOCUS_BUS_QUEUE_TYPE",
    "quorum",
    z.enum(["quorum", "classic"]),
    "What each consumer group's work queue is on RabbitMQ.",
  ),
  busDeliveryLimit: integer(
    "LOCUS_BUS_DELIVERY_LIMIT",
    5,
    [1, 100],
    "Times a file's work may end unanswered (a crashed worker or process) before the file fails.",
  ),
  redisUrl: setting("REDIS_URL", NONE, z.url({ protocol: /^rediss?$/ }).optional(), "Redis: shared counts."),
  /** Set when S3_BUCKET is (LOCUS_BLOB_STORE=s3 needs it). */
  s3: z
    .object({
      bucket: setting("S3_BUCKET", NONE, z.string().min(3).optional(), "The bucket uploads go to."),
      region: setting("S3_REGION", "us-east-1", text(), "The bucket's region."),
      endpoint: setting("S3_ENDPOINT", unset("AWS"), httpUrl().optional(), "An S3-compatible store's URL."),
      forcePathStyle: setting(
        "S3_FORCE_PATH_STYLE",
        "false",
        flag(),
        "Name the bucket in the path, not the host (MinIO and the like).",
      ),
      createBucket: setting(
        "S3_CREATE_BUCKET",
        "false",
        flag(),
        "Create the bucket when it does not exist (a local store); otherwise Locus is not ready until it does.",
      ),
      accessKeyId: setting("S3_ACCESS_KEY_ID", unset(SDK_CHAIN), text().optional(), "The access key's id."),
      secretAccessKey: setting(
        "S3_SECRET_ACCESS_KEY",
        unset(SDK_CHAIN),
        text().optional(),
        "The access key's secret.",
      ),
    })
    .transform(({ bucket, ...rest }) => (bucket ? { bucket, ...rest } : undefined)),
  internalSecret: setting("LOCUS_INTERNAL_SECRET", NONE, secret, "Signs the calls between split services."),
  /** Where the gateway reaches services that run in other processes. */
  filesUrl: setting("LOCUS_FILES_URL", NONE, baseUrl(), "Where a split gateway reaches the files service."),
  searchUrl: setting(
    "LOCUS_SEARCH_URL",
    NONE,
    baseUrl(),
    "Where a split gateway reaches the search service.",
  ),
  webhooksUrl: setting(
    "LOCUS_WEBHOOKS_URL",
    NONE,
    baseUrl(),
    "Where a split gateway reaches the webhooks service.",
  ),
  webhooks: z.object({
    /**
     * Webhook receivers on these kinds of address are refused unless listed (SSRF: a webhook must
     * not reach the cluster's own services or the cloud's metadata address).
     */
    allowAddresses: setting(
      "LOCUS_WEBHOOK_ALLOW_ADDRESSES",
      "",
      webhookAddressKinds,
      "Webhook receivers allowed on these kinds of address, comma-separated: loopback, private, link-local.",
    ),
    /** Standard Webhooks' (Svix's) schedule: eight attempts over about 27 hours. */
    retryScheduleMs: setting(
      "LOCUS_WEBHOOK_RETRY_SCHEDULE_S",
      "5,300,1800,7200,18000,36000,36000",
      retrySchedule,
      "Seconds between a webhook's attempts, comma-separated; after the last, the delivery fails.",
    ),
    timeoutMs: integer(
      "LOCUS_WEBHOOK_TIMEOUT_MS",
      15_000,
      [100, 120_000],
      "A webhook receiver's time to answer one attempt.",
    ),
    concurrency: integer(
      "LOCUS_WEBHOOK_CONCURRENCY",
      8,
      [1, 256],
      "Webhook attempts one process sends at once.",
    ),
    secretOverlapS: integer(
      "LOCUS_WEBHOOK_SECRET_OVERLAP_S",
      WEBHOOK_LIMITS.secretOverlapDefaultS,
      [0, WEBHOOK_LIMITS.secretOverlapMaxS],
      "Seconds a webhook secret replaced by rotate-secret keeps signing deliveries too (a second signature), unless the rotation says otherwise.",
    ),
    retentionDays: integer(
      "LOCUS_WEBHOOK_RETENTION_DAYS",
      30,
      [1, 3650],
      "Days the event log keeps an event and the delivery log a finished delivery; a delivery held for a disabled endpoint longer than this fails.",
    ),
  }),
  serviceName: setting(
    "LOCUS_SERVICE_NAME",
    unset("`locus`, or the targets joined by `+`"),
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "must be a short lower-case name")
      .optional(),
    "How this process names itself in logs and to the broker.",
  ),
  /** The operator CLI's deadline (see apps/locus/src/cli.ts for the long commands' share of it). */
  cliTimeoutMs: integer(
    "LOCUS_CLI_TIMEOUT_S",
    60,
    [0, 86_400],
    "Seconds an operator command (pnpm locus) may take before it stops with exit code 1 naming what it waited for; 0: no limit.",
  ).transform((s) => s * 1000),
});

/** Every setting, in declaration order: the README test and error messages read these. */
export const SETTINGS: readonly Setting[] = (function collect(schema: z.ZodType, path: string[]): Setting[] {
  const meta = settingMeta.get(schema);
  if (meta) return [{ ...meta, path }];
  if (schema instanceof z.ZodObject) {
    return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([key, inner]) =>
      collect(inner, [...path, key]),
    );
  }
  // A group or a setting whose value is derived further (.transform): the settings are inside.
  if (schema instanceof z.ZodPipe) return collect(schema.in as z.ZodType, path);
  throw new Error(`config: ${path.join(".")} is neither a setting nor a group of settings`);
})(Settings, []);

const ENV_BY_PATH = new Map(SETTINGS.map((s) => [s.path.join("."), s.env]));

/**
 * The environment arranged as Settings is: each variable's text where its setting sits, or, with
 * LOCUS_SHAPE=split, the split shape's default where the setting has one and the variable is unset.
 */
function arrange(env: unknown): Record<string, unknown> {
  const vars = (env ?? {}) as Record<string, string | undefined>;
  const split = vars[SHAPE_ENV] === "split";
  const input: Record<string, unknown> = {};
  for (const { path, env: name, splitDefault } of SETTINGS) {
    let group = input;
    for (const key of path.slice(0, -1)) group = (group[key] ??= {}) as Record<string, unknown>;
    group[path[path.length - 1] ?? ""] = vars[name] ?? (split ? splitDefault : undefined);
  }
  return input;
}

/** Modules that run the work of one target each; `all` is every one of them. */
const MODULES = TARGETS.filter((t) => t !== "all");
const modulesOf = (targets: Target[]) => new Set(targets.includes("all") ? MODULES : targets);

type Settings = z.output<typeof Settings>;

/** Rules across settings; each message names the variables involved, as there is no one path. */
function crossFieldRules(c: Settings, ctx: z.RefinementCtx<Settings>): void {
  const problem = (message: string) => ctx.addIssue({ code: "custom", message });
  const need = (value: unknown, name: string, why: string) => {
    if (value === undefined) problem(`${name}: required ${why}`);
  };
  const { adapters, elasticsearch: es } = c;
  // The connection settings of the chosen shared adapters that are missing: each said on its own,
  // or in the split shape in one sentence (the shape chose most of those adapters, not the operator).
  const unconnected: { name: string; why: string }[] = [];
  const connect = (value: unknown, name: string, why: string) => {
    if (value === undefined) unconnected.push({ name, why });
  };
  if (adapters.metadataStore === "postgres" || adapters.searchIndex === "postgres") {
    connect(c.postgres, "DATABASE_URL", "by the postgres metadata store or search index");
  }
  if (adapters.bus === "rabbitmq") connect(c.amqpUrl, "AMQP_URL", "by LOCUS_BUS=rabbitmq");
  if (adapters.searchIndex === "elasticsearch" && !es.node && !es.cloudId) {
    connect(undefined, "ELASTICSEARCH_URL or ELASTICSEARCH_CLOUD_ID", "by LOCUS_SEARCH_INDEX=elasticsearch");
  }
  if (adapters.rateLimitStore === "redis")
    connect(c.redisUrl, "REDIS_URL", "by LOCUS_RATE_LIMIT_STORE=redis");
  if (adapters.blobStore === "s3") connect(c.s3, "S3_BUCKET", "by LOCUS_BLOB_STORE=s3");
  if (unconnected.length > 0 && c.shape === "split") {
    const one = unconnected.length === 1;
    problem(
      `LOCUS_SHAPE=split runs every part on shared infrastructure, but ${one ? "this is" : "these are"} not set: ` +
        `${unconnected.map(({ name, why }) => `${name} (required ${why})`).join(", ")}. Set ${one ? "it" : "them"}, ` +
        "or name another adapter for that part (LOCUS_METADATA_STORE, LOCUS_SEARCH_INDEX, LOCUS_BUS, " +
        "LOCUS_BLOB_STORE, LOCUS_RATE_LIMIT_STORE)",
    );
  } else {
    for (const { name, why } of unconnected) {
      problem(name.includes(" or ") ? `${name}: one is required ${why}` : `${name}: required ${why}`);
    }
  }
  if ((es.username === undefined) !== (es.password === undefined)) {
    problem("ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD: set both or neither");
  }
  if (c.speech.engine === "openai") need(c.openai.apiKey, "OPENAI_API_KEY", "by LOCUS_SPEECH_ENGINE=openai");
  if (c.ai.embedder === "openai") need(c.openai.apiKey, "OPENAI_API_KEY", "by LOCUS_EMBEDDER=openai");
  if (c.ai.summarizer === "openai") need(c.openai.apiKey, "OPENAI_API_KEY", "by LOCUS_SUMMARIZER=openai");

  // What this process runs decides what it must share with the others.
  const modules = modulesOf(c.targets);
  if (c.targets.includes("encoder") && !meaningStageRuns(c)) {
    problem(
      'LOCUS_TARGETS: "encoder" runs the meaning stage, which runs only with LOCUS_EMBEDDER=encoder ' +
        "on a SQLite or PostgreSQL index (on Elasticsearch the indexer encodes passages itself)",
    );
  }
  const runsPart = modules.size < MODULES.length;
  if (!runsPart && c.shape !== "split") return;
  // Each process would hold its own copy of an embedded piece: messages or data would vanish.
  const embedded = [
    adapters.bus === "memory" && "LOCUS_BUS=memory (use rabbitmq)",
    adapters.metadataStore === "sqlite" && "LOCUS_METADATA_STORE=sqlite (use postgres)",
    adapters.searchIndex === "sqlite" && "LOCUS_SEARCH_INDEX=sqlite (use postgres or elasticsearch)",
    adapters.blobStore === "local" && "LOCUS_BLOB_STORE=local (use s3)",
  ].filter(Boolean);
  if (embedded.length > 0) {
    problem(
      runsPart
        ? `LOCUS_TARGETS: "${c.targets.join(",")}" runs part of Locus in this process, so every piece must be shared; ` +
            `not ${embedded.join(", ")}`
        : `LOCUS_SHAPE=split shares every piece between processes; not ${embedded.join(", ")}`,
    );
  }
  if (!runsPart) return;
  const callsOthers =
    modules.has("gateway") && (!modules.has("files") || !modules.has("search") || !modules.has("webhooks"));
  const servesOthers =
    (modules.has("files") || modules.has("search") || modules.has("webhooks")) && !modules.has("gateway");
  if (callsOthers || servesOthers) {
    need(c.internalSecret, "LOCUS_INTERNAL_SECRET", "to sign the calls between services");
  }
  if (modules.has("gateway") && !modules.has("files")) {
    need(c.filesUrl, "LOCUS_FILES_URL", "by a gateway that runs without the files service");
  }
  if (modules.has("gateway") && !modules.has("search")) {
    need(c.searchUrl, "LOCUS_SEARCH_URL", "by a gateway that runs without the search service");
  }
  if (modules.has("gateway") && !modules.has("webhooks")) {
    need(c.webhooksUrl, "LOCUS_WEBHOOKS_URL", "by a gateway that runs without the webhooks service");
  }
}

/**
 * Whether passages are encoded in a stage of their own (the `encoder` consumer group) after the
 * indexer made their file ready, rather than by the indexer: with the sentence encoder (a few
 * milliseconds a passage, which would hold every file back) on an index that takes vectors after
 * its passages. Elasticsearch cannot yet (its documents keep no vectors to update beside), so
 * there the indexer encodes as before.
 */
export function meaningStageRuns(c: {
  ai: { embedder: string };
  adapters: { searchIndex: string };
}): boolean {
  return c.ai.embedder === "encoder" && c.adapters.searchIndex !== "elasticsearch";
}

/** The environment to LocusConfig: every setting read, then the rules across them, then what follows from them. */
export const LocusConfigSchema = z.preprocess(
  arrange,
  Settings.superRefine(crossFieldRules, {
    // Only once every setting could be read: the rules assume readable values, and a bad value
    // is reported on its own rather than with what it happens to break.
    when: (payload) => payload.issues.length === 0,
  }).transform((c) => {
    const split = modulesOf(c.targets).size < MODULES.length;
    return {
      ...c,
      /** Set when LOCUS_SEARCH_INDEX=elasticsearch. */
      elasticsearch: c.adapters.searchIndex === "elasticsearch" ? c.elasticsearch : undefined,
      /** True when this process runs only part of Locus (the split shape). */
      split,
      /** True when passages get the sentence encoder's vectors after their file is ready (see meaningStageRuns). */
      meaningStage: meaningStageRuns(c),
      serviceName: c.serviceName ?? (split ? c.targets.join("+") : "locus"),
    };
  }),
);

export type LocusConfig = z.output<typeof LocusConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Reads and validates the configuration; throws ConfigError listing every problem at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LocusConfig {
  const parsed = LocusConfigSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        // A setting's own problem is named by its variable; a rule's message names its variables.
        const name = ENV_BY_PATH.get(issue.path.join(".")) ?? issue.path.join(".");
        return name ? `${name}: ${issue.message}` : issue.message;
      }),
    );
  }
  return parsed.data;
}

/** A part of Locus an adapter setting chooses where it lives. */
export type Part = "metadataStore" | "blobStore" | "bus" | "searchIndex";

/** What each part is when its adapter is left at the embedded default, in an operator's words. */
const EMBEDDED_PART: Record<Part, (dataDir: string) => string> = {
  metadataStore: (dataDir) => `the SQLite records in ${dataDir}`,
  blobStore: (dataDir) => `the files in ${dataDir}`,
  bus: () => "an in-process bus of its own",
  searchIndex: (dataDir) => `the SQLite search index in ${dataDir}`,
};

/** Settings that name a shared part of a deployment: their connections. */
const CONNECTIONS = ["DATABASE_URL", "AMQP_URL", "S3_BUCKET", "ELASTICSEARCH_URL", "ELASTICSEARCH_CLOUD_ID"];

/**
 * For a process that works on a deployment from outside it (the operator CLI), which would
 * otherwise mix parts silently: with settings that name a shared part (a connection, or an
 * adapter set to a shared one) but neither LOCUS_SHAPE nor an adapter of its own for each part in
 * `uses`, those parts would be embedded ones in the data dir, not the deployment's. Returns the
 * sentence that says so and what to set, or undefined when every part used is named.
 */
export function unnamedParts(
  config: LocusConfig,
  env: NodeJS.ProcessEnv,
  uses: readonly Part[],
): string | undefined {
  const given = (name: string) => (env[name]?.trim() ?? "") !== "";
  if (given(SHAPE_ENV)) return undefined;
  const adapter = (part: Part) => {
    const found = SETTINGS.find((s) => s.path.join(".") === `adapters.${part}`);
    if (!found) throw new Error(`config: no adapter setting for ${part}`);
    return found;
  };
  const unnamed = uses.map(adapter).filter((s) => !given(s.env));
  if (unnamed.length === 0) return undefined;
  const shared = [
    ...CONNECTIONS.filter(given),
    ...(["metadataStore", "blobStore", "bus", "searchIndex"] as const)
      .map(adapter)
      .filter((s) => given(s.env) && env[s.env] !== String(s.default))
      .map((s) => `${s.env}=${env[s.env]}`),
  ];
  if (shared.length === 0) return undefined;
  const names = unnamed.map((s) => s.env);
  const parts = uses
    .filter((part) => names.includes(adapter(part).env))
    .map((p) => EMBEDDED_PART[p](config.dataDir));
  const are = (list: unknown[]) => (list.length === 1 ? "is" : "are");
  return (
    `${shared.join(", ")} ${are(shared)} set, naming a deployment's shared parts, but ${names.join(", ")} ` +
    `${are(names)} not, so this command would use ${parts.join(", ")}, ` +
    "instead of the deployment's. Set LOCUS_SHAPE=split to use every shared part (as pnpm start:split, " +
    `docker-compose and k8s/base do), or name each (${unnamed.map((s) => `${s.env}=${s.splitDefault}`).join(", ")}), ` +
    "or set LOCUS_SHAPE=embedded to use the data dir's."
  );
}
