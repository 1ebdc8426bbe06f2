import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { z } from "zod";

/**
 * The only place that reads process.env. Every setting is validated once at start; a bad value
 * stops the process with one message that names every problem.
 */
export const TARGETS = [
  "all",
  "gateway",
  "files",
  "extractor-pdf",
  "extractor-image",
  "extractor-audio",
  "extractor-video",
  "indexer",
  "search",
] as const;
export type Target = (typeof TARGETS)[number];

const int = (def: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be an integer from ${min} to ${max}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

/** Express's names for address ranges (proxy-addr): loopback, link-local and private addresses. */
const PROXY_PRESETS = ["loopback", "linklocal", "uniquelocal"];

/**
 * LOCUS_TRUST_PROXY: which proxies' X-Forwarded-For and X-Forwarded-Proto to believe. A number of
 * hops (the closest N proxies), or addresses and CIDR ranges (and Express's presets) of the
 * proxies, comma-separated. Unset or "false": none, so a client cannot claim another address.
 */
const trustProxy = z
  .string()
  .optional()
  .transform((v, ctx): false | number | string[] => {
    const value = v?.trim() ?? "";
    if (value === "" || value === "false") return false;
    if (/^\d+$/.test(value)) return Number(value);
    const entries = value.split(",").map((s) => s.trim());
    const bad = entries.filter((entry) => {
      if (PROXY_PRESETS.includes(entry)) return false;
      const [address = "", bits, ...rest] = entry.split("/");
      const family = isIP(address);
      if (family === 0 || rest.length > 0) return true;
      if (bits === undefined) return false;
      return !/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128);
    });
    if (bad.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be a number of proxy hops, or addresses and CIDR ranges (or ${PROXY_PRESETS.join(", ")}) separated by commas; not ${bad.map((b) => `"${b}"`).join(", ")}`,
      });
      return z.NEVER;
    }
    return entries;
  });

/**
 * Values that were copied from an example and never changed: docker-compose's and the Kubernetes
 * template's placeholders, and the like. A secret anyone can read in this repository lets anyone
 * who reaches an internal port mint service identities, or forge preview links.
 */
const PLACEHOLDER =
  /change[-_ ]?me|placeholder|example|replace[-_ ]?(?:me|this)|your[-_ ]?secret|at[-_ ]least[-_ ]32/i;

/** A shared secret: long enough, and not a placeholder or a run of a few characters. */
const secret = z
  .string()
  .min(32, "must be at least 32 characters")
  .refine((v) => !PLACEHOLDER.test(v), {
    message: "is a placeholder from an example file: set a random value (e.g. openssl rand -base64 32)",
  })
  .refine((v) => new Set(v).size >= 10, {
    message:
      "has too few different characters to be random: set a random value (e.g. openssl rand -base64 32)",
  })
  .optional();

const EnvSchema = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: int(8080, 0, 65535),
  LOCUS_DATA_DIR: z.string().min(1).default("./data"),
  LOCUS_TARGETS: z
    .string()
    .default("all")
    .transform((v, ctx) => {
      const names = v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = names.filter((n) => !(TARGETS as readonly string[]).includes(n));
      if (unknown.length > 0 || names.length === 0) {
        ctx.addIssue({
          code: "custom",
          message: `unknown target(s) ${unknown.join(", ") || "(none given)"}; choose from ${TARGETS.join(", ")}`,
        });
        return z.NEVER;
      }
      return names as Target[];
    }),
  LOCUS_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .transform((v) => v?.replace(/\/+$/, "")),
  LOCUS_TRUST_PROXY: trustProxy,
  LOCUS_SIGNING_SECRET: secret,
  LOCUS_MAX_UPLOAD_BYTES: int(100 * 1024 * 1024, 1),
  LOCUS_RATE_LIMIT_FREE: int(5, 1),
  LOCUS_RATE_LIMIT_PRO: int(50, 1),
  LOCUS_RATE_LIMIT_ENTERPRISE: int(500, 1),
  LOCUS_QUOTA_FREE: int(100, 0),
  LOCUS_QUOTA_PRO: int(10_000, 0),
  LOCUS_QUOTA_ENTERPRISE: int(0, 0),
  LOCUS_EXTRACT_CONCURRENCY: int(2, 1, 64),
  LOCUS_MAX_ATTEMPTS: int(3, 1, 20),
  LOCUS_STALLED_AFTER_S: int(600, 5),
  LOCUS_PDF_PAGE_TIMEOUT_MS: int(60_000, 100),
  LOCUS_PDF_ENGINE: z.enum(["auto", "poppler", "pdfjs"]).default("auto"),
  LOCUS_EXTRACT_MAX_HEAP_MB: int(1024, 64),
  LOCUS_OCR_ENGINE: z.enum(["auto", "native", "wasm"]).default("auto"),
  LOCUS_TESSERACT_PATH: z.string().min(1).default("tesseract"),
  LOCUS_OCR_MODELS: z.enum(["auto", "system", "packaged"]).default("auto"),
  LOCUS_OCR_LANGUAGES: z
    .string()
    .default("eng")
    .transform((v, ctx) => {
      const codes = v
        .split(/[+,]/)
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = codes.filter((c) => !/^[a-z]{3}(_[a-z]+)?$/.test(c));
      if (codes.length === 0 || bad.length > 0) {
        ctx.addIssue({
          code: "custom",
          message: `must be Tesseract language codes joined by "+" (such as eng+deu), got "${v}"`,
        });
        return z.NEVER;
      }
      return [...new Set(codes)];
    }),
  LOCUS_OCR_WORKERS: int(Math.min(4, Math.max(1, availableParallelism())), 1, 64),
  LOCUS_OCR_TIMEOUT_MS: int(120_000, 100),
  LOCUS_OCR_MIN_CONFIDENCE: int(50, 0, 100),
  LOCUS_IMAGE_MAX_PIXELS: int(100_000_000, 1_000_000, 1_000_000_000),
  LOCUS_PDF_OCR: z.enum(["true", "false"]).default("true"),
  LOCUS_PDF_OCR_DPI: int(200, 72, 600),
  LOCUS_SPEECH_ENGINE: z.enum(["pocketsphinx", "openai"]).default("pocketsphinx"),
  LOCUS_POCKETSPHINX_MODEL_DIR: z.string().min(1).default("/usr/share/pocketsphinx/model/en-us"),
  LOCUS_MEDIA_MAX_DURATION_S: int(4 * 3600, 1),
  LOCUS_FFMPEG_PATH: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).default("https://api.openai.com/v1"),
  OPENAI_API_KEY: z.string().min(1).optional(),
  LOCUS_OPENAI_TRANSCRIBE_MODEL: z.string().min(1).default("whisper-1"),
  LOCUS_OPENAI_TIMEOUT_MS: int(60_000, 100),
  LOCUS_OPENAI_MAX_RETRIES: int(2, 0, 10),
  LOCUS_EMBEDDER: z.enum(["local", "openai"]).default("local"),
  LOCUS_SUMMARIZER: z.enum(["local", "openai"]).default("local"),
  LOCUS_OPENAI_EMBED_MODEL: z.string().min(1).default("text-embedding-3-small"),
  LOCUS_OPENAI_EMBED_DIMENSIONS: z.coerce.number().int().min(1).max(8192).optional(),
  LOCUS_OPENAI_CHAT_MODEL: z.string().min(1).default("gpt-4o-mini"),
  LOCUS_AI_TIMEOUT_MS: int(8_000, 100),
  LOCUS_AI_MAX_RETRIES: int(1, 0, 10),
  LOCUS_WORD_VECTORS_PATH: z.string().min(1).optional(),
  LOCUS_VECTOR_CACHE_MB: int(256, 0, 65_536),
  LOCUS_POSTINGS_CACHE_MB: int(128, 0, 65_536),
  LOCUS_SIGNUPS_PER_HOUR: int(10, 1),
  LOCUS_SERVICE_NAME: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "must be a short lower-case name")
    .optional(),
  LOCUS_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  LOCUS_METADATA_STORE: z.enum(["sqlite", "postgres"]).default("sqlite"),
  LOCUS_BLOB_STORE: z.enum(["local", "s3"]).default("local"),
  LOCUS_BUS: z.enum(["memory", "rabbitmq"]).default("memory"),
  LOCUS_SEARCH_INDEX: z.enum(["sqlite", "postgres", "elasticsearch"]).default("sqlite"),
  ELASTICSEARCH_URL: z.url({ protocol: /^https?$/ }).optional(),
  ELASTICSEARCH_CLOUD_ID: z.string().min(1).optional(),
  ELASTICSEARCH_API_KEY: z.string().min(1).optional(),
  ELASTICSEARCH_USERNAME: z.string().min(1).optional(),
  ELASTICSEARCH_PASSWORD: z.string().min(1).optional(),
  ELASTICSEARCH_CA_CERT: z.string().min(1).optional(),
  ELASTICSEARCH_REQUEST_TIMEOUT_MS: int(10_000, 100),
  ELASTICSEARCH_MAX_RETRIES: int(3, 0, 20),
  LOCUS_ES_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,100}$/, "must be a lower-case index name")
    .default("locus-passages"),
  LOCUS_RATE_LIMIT_STORE: z.enum(["memory", "redis"]).default("memory"),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  LOCUS_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case SQL identifier")
    .optional(),
  AMQP_URL: z.url({ protocol: /^amqps?$/ }).optional(),
  LOCUS_AMQP_PREFIX: z
    .string()
    .regex(/^[a-z0-9_.-]*$/, "may hold only a-z, 0-9, '_', '.' and '-'")
    .default(""),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  S3_BUCKET: z.string().min(3).optional(),
  S3_REGION: z.string().min(1).default("us-east-1"),
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_FORCE_PATH_STYLE: z.enum(["true", "false"]).default("false"),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  LOCUS_INTERNAL_SECRET: secret,
  LOCUS_FILES_URL: z.url({ protocol: /^https?$/ }).optional(),
  LOCUS_SEARCH_URL: z.url({ protocol: /^https?$/ }).optional(),
});

/** Modules that run the work of one target each; `all` is every one of them. */
const MODULES = TARGETS.filter((t) => t !== "all");

export type Plan = "free" | "pro" | "enterprise";

export interface LocusConfig {
  host: string;
  port: number;
  dataDir: string;
  targets: Target[];
  /** Base of links Locus hands out (preview URLs); when unset, taken from the request's Host. */
  publicUrl: string | undefined;
  /**
   * The proxies in front of the gateway whose X-Forwarded-For/-Proto are believed (Express's
   * "trust proxy"): false for none, a number of hops, or their addresses and ranges.
   */
  trustProxy: false | number | string[];
  /** Signs preview tokens; when unset, a random secret is kept in the data directory. */
  signingSecret: string | undefined;
  maxUploadBytes: number;
  /** Requests per second per account. */
  rateLimits: Record<Plan, number>;
  /** Live uploads per calendar month (UTC) per account; 0 means unlimited. */
  monthlyUploadQuota: Record<Plan, number>;
  extractConcurrency: number;
  maxAttempts: number;
  /**
   * Split shape: a file left `pending` or `processing` this long without a word is published again
   * (a message lost with a crashed process, an upload whose announcement never went out).
   */
  stalledAfterMs: number;
  /** One PDF page taking longer than this fails the file (stuck or hostile PDFs). */
  pdfPageTimeoutMs: number;
  /**
   * What reads PDFs' text layers: Poppler's tools (`poppler-utils`) with pdf.js taking over where
   * they fail, or pdf.js alone; `auto`: Poppler when installed.
   */
  pdfEngine: "auto" | "poppler" | "pdfjs";
  /** Heap of one extraction thread; a file needing more fails instead of the process. */
  extractMaxHeapMb: number;
  ocr: {
    /**
     * Which Tesseract reads images: `native`, the tesseract command (Debian's tesseract-ocr), one
     * process per image; `wasm`, tesseract.js, which needs nothing installed; `auto`: native when
     * the command works.
     */
    engine: "auto" | "native" | "wasm";
    /** The tesseract command: a path, or a name looked up on PATH. */
    tesseractPath: string;
    /** Where the OCR models come from: the tesseract command's own (`system`), the npm packages', or `auto`. */
    models: "auto" | "system" | "packaged";
    /** Tesseract language codes: the tesseract command's own model of each, or its @tesseract.js-data/<code> package's. */
    languages: string[];
    /** Recognisers (threads, ~150 MB each) shared by the image and PDF extractors of a process. */
    workers: number;
    /** One image or page taking longer than this fails its file. */
    timeoutMs: number;
    /** Lines read with less confidence than this (0–1) are dropped as noise. */
    minConfidence: number;
    /** An image page with more pixels than this is refused (decompression bombs). */
    maxImagePixels: number;
    /** Read PDF pages without a real text layer by OCR. */
    pdfScans: boolean;
    /** Resolution such pages are drawn at for OCR. */
    pdfDpi: number;
  };
  speech: {
    engine: "pocketsphinx" | "openai";
    /** Debian's pocketsphinx-en-us model. */
    pocketsphinxModelDir: string;
    /** Recordings declaring more seconds than this are refused. */
    maxDurationS: number;
    /** The ffmpeg that reads recordings and videos; unset: Debian's where installed, else npm's. */
    ffmpegPath: string | undefined;
  };
  /** Any OpenAI-compatible server, for the engines that use one. */
  openai: {
    baseUrl: string;
    apiKey: string | undefined;
    transcribeModel: string;
    timeoutMs: number;
    maxRetries: number;
    embedModel: string;
    /** Shorter vectors asked of the embedding model (text-embedding-3 takes it), when set. */
    embedDimensions: number | undefined;
    chatModel: string;
  };
  /** ai search: which engines, and how long a search waits for a remote one. */
  ai: {
    embedder: "local" | "openai";
    summarizer: "local" | "openai";
    /** Longest wait for one remote call made while a search waits (the question's vector, the summary). */
    timeoutMs: number;
    maxRetries: number;
    /** The converted word vectors; unset: beside @locus/embedder, made on first use. */
    wordVectorsPath: string | undefined;
    /** Memory for users' passage vectors kept between searches (SQLite and Postgres indexes). */
    vectorCacheBytes: number;
  };
  /** Dashboard accounts one client address may create in an hour. */
  signUpsPerHour: number;
  logLevel: z.infer<typeof EnvSchema>["LOCUS_LOG_LEVEL"];
  adapters: {
    metadataStore: "sqlite" | "postgres";
    blobStore: "local" | "s3";
    bus: "memory" | "rabbitmq";
    searchIndex: "sqlite" | "postgres" | "elasticsearch";
    rateLimitStore: "memory" | "redis";
  };
  /** Set when a Postgres adapter is chosen. */
  postgres:
    | {
        url: string;
        schema: string | undefined;
        /** Memory for users' postings kept between quick searches by the Postgres search index. */
        postingsCacheBytes: number;
      }
    | undefined;
  /** Set when LOCUS_SEARCH_INDEX=elasticsearch. */
  elasticsearch:
    | {
        node: string | undefined;
        cloudId: string | undefined;
        apiKey: string | undefined;
        username: string | undefined;
        password: string | undefined;
        /** Path to a PEM file with the cluster's CA certificate. */
        caCertPath: string | undefined;
        requestTimeoutMs: number;
        maxRetries: number;
        indexPrefix: string;
      }
    | undefined;
  amqpUrl: string | undefined;
  /** Put before every exchange and queue name: deployments (or test runs) sharing a vhost stay apart. */
  amqpPrefix: string;
  redisUrl: string | undefined;
  s3:
    | {
        bucket: string;
        region: string;
        endpoint: string | undefined;
        forcePathStyle: boolean;
        accessKeyId: string | undefined;
        secretAccessKey: string | undefined;
      }
    | undefined;
  /** Signs the calls between services (split shape). */
  internalSecret: string | undefined;
  /** Where the gateway reaches services that run in other processes. */
  filesUrl: string | undefined;
  searchUrl: string | undefined;
  /** True when this process runs only part of Locus (the split shape). */
  split: boolean;
  /** How this process names itself in logs and to the broker. */
  serviceName: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Reads and validates the configuration; throws ConfigError listing every problem at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LocusConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  const need = (value: string | undefined, name: string, why: string) => {
    if (value === undefined) problems.push(`${name}: required ${why}`);
  };
  if (e.LOCUS_METADATA_STORE === "postgres" || e.LOCUS_SEARCH_INDEX === "postgres") {
    need(e.DATABASE_URL, "DATABASE_URL", "by the postgres metadata store or search index");
  }
  if (e.LOCUS_BUS === "rabbitmq") need(e.AMQP_URL, "AMQP_URL", "by LOCUS_BUS=rabbitmq");
  if (e.LOCUS_SEARCH_INDEX === "elasticsearch" && !e.ELASTICSEARCH_URL && !e.ELASTICSEARCH_CLOUD_ID) {
    problems.push(
      "ELASTICSEARCH_URL or ELASTICSEARCH_CLOUD_ID: one is required by LOCUS_SEARCH_INDEX=elasticsearch",
    );
  }
  if ((e.ELASTICSEARCH_USERNAME === undefined) !== (e.ELASTICSEARCH_PASSWORD === undefined)) {
    problems.push("ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD: set both or neither");
  }
  if (e.LOCUS_RATE_LIMIT_STORE === "redis") need(e.REDIS_URL, "REDIS_URL", "by LOCUS_RATE_LIMIT_STORE=redis");
  if (e.LOCUS_SPEECH_ENGINE === "openai")
    need(e.OPENAI_API_KEY, "OPENAI_API_KEY", "by LOCUS_SPEECH_ENGINE=openai");
  if (e.LOCUS_EMBEDDER === "openai") need(e.OPENAI_API_KEY, "OPENAI_API_KEY", "by LOCUS_EMBEDDER=openai");
  if (e.LOCUS_SUMMARIZER === "openai") need(e.OPENAI_API_KEY, "OPENAI_API_KEY", "by LOCUS_SUMMARIZER=openai");
  if (e.LOCUS_BLOB_STORE === "s3") need(e.S3_BUCKET, "S3_BUCKET", "by LOCUS_BLOB_STORE=s3");

  // What this process runs decides what it must share with the others.
  const modules = new Set(e.LOCUS_TARGETS.includes("all") ? MODULES : e.LOCUS_TARGETS);
  const split = modules.size < MODULES.length;
  if (split) {
    // Each process would hold its own copy of an embedded piece: messages or data would vanish.
    const embedded = [
      e.LOCUS_BUS === "memory" && "LOCUS_BUS=memory (use rabbitmq)",
      e.LOCUS_METADATA_STORE === "sqlite" && "LOCUS_METADATA_STORE=sqlite (use postgres)",
      e.LOCUS_SEARCH_INDEX === "sqlite" && "LOCUS_SEARCH_INDEX=sqlite (use postgres or elasticsearch)",
      e.LOCUS_BLOB_STORE === "local" && "LOCUS_BLOB_STORE=local (use s3)",
    ].filter(Boolean);
    if (embedded.length > 0) {
      problems.push(
        `LOCUS_TARGETS: "${e.LOCUS_TARGETS.join(",")}" runs part of Locus in this process, so every piece must be shared; ` +
          `not ${embedded.join(", ")}`,
      );
    }
    const callsOthers = modules.has("gateway") && (!modules.has("files") || !modules.has("search"));
    const servesOthers = (modules.has("files") || modules.has("search")) && !modules.has("gateway");
    if (callsOthers || servesOthers) {
      need(e.LOCUS_INTERNAL_SECRET, "LOCUS_INTERNAL_SECRET", "to sign the calls between services");
    }
    if (modules.has("gateway") && !modules.has("files")) {
      need(e.LOCUS_FILES_URL, "LOCUS_FILES_URL", "by a gateway that runs without the files service");
    }
    if (modules.has("gateway") && !modules.has("search")) {
      need(e.LOCUS_SEARCH_URL, "LOCUS_SEARCH_URL", "by a gateway that runs without the search service");
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: e.LOCUS_DATA_DIR,
    targets: e.LOCUS_TARGETS,
    publicUrl: e.LOCUS_PUBLIC_URL,
    trustProxy: e.LOCUS_TRUST_PROXY,
    signingSecret: e.LOCUS_SIGNING_SECRET,
    maxUploadBytes: e.LOCUS_MAX_UPLOAD_BYTES,
    rateLimits: {
      free: e.LOCUS_RATE_LIMIT_FREE,
      pro: e.LOCUS_RATE_LIMIT_PRO,
      enterprise: e.LOCUS_RATE_LIMIT_ENTERPRISE,
    },
    monthlyUploadQuota: {
      free: e.LOCUS_QUOTA_FREE,
      pro: e.LOCUS_QUOTA_PRO,
      enterprise: e.LOCUS_QUOTA_ENTERPRISE,
    },
    extractConcurrency: e.LOCUS_EXTRACT_CONCURRENCY,
    maxAttempts: e.LOCUS_MAX_ATTEMPTS,
    stalledAfterMs: e.LOCUS_STALLED_AFTER_S * 1000,
    pdfPageTimeoutMs: e.LOCUS_PDF_PAGE_TIMEOUT_MS,
    pdfEngine: e.LOCUS_PDF_ENGINE,
    extractMaxHeapMb: e.LOCUS_EXTRACT_MAX_HEAP_MB,
    ocr: {
      engine: e.LOCUS_OCR_ENGINE,
      tesseractPath: e.LOCUS_TESSERACT_PATH,
      models: e.LOCUS_OCR_MODELS,
      languages: e.LOCUS_OCR_LANGUAGES,
      workers: e.LOCUS_OCR_WORKERS,
      timeoutMs: e.LOCUS_OCR_TIMEOUT_MS,
      minConfidence: e.LOCUS_OCR_MIN_CONFIDENCE / 100,
      maxImagePixels: e.LOCUS_IMAGE_MAX_PIXELS,
      pdfScans: e.LOCUS_PDF_OCR === "true",
      pdfDpi: e.LOCUS_PDF_OCR_DPI,
    },
    speech: {
      engine: e.LOCUS_SPEECH_ENGINE,
      pocketsphinxModelDir: e.LOCUS_POCKETSPHINX_MODEL_DIR,
      maxDurationS: e.LOCUS_MEDIA_MAX_DURATION_S,
      ffmpegPath: e.LOCUS_FFMPEG_PATH,
    },
    openai: {
      baseUrl: e.OPENAI_BASE_URL.replace(/\/+$/, ""),
      apiKey: e.OPENAI_API_KEY,
      transcribeModel: e.LOCUS_OPENAI_TRANSCRIBE_MODEL,
      timeoutMs: e.LOCUS_OPENAI_TIMEOUT_MS,
      maxRetries: e.LOCUS_OPENAI_MAX_RETRIES,
      embedModel: e.LOCUS_OPENAI_EMBED_MODEL,
      embedDimensions: e.LOCUS_OPENAI_EMBED_DIMENSIONS,
      chatModel: e.LOCUS_OPENAI_CHAT_MODEL,
    },
    ai: {
      embedder: e.LOCUS_EMBEDDER,
      summarizer: e.LOCUS_SUMMARIZER,
      timeoutMs: e.LOCUS_AI_TIMEOUT_MS,
      maxRetries: e.LOCUS_AI_MAX_RETRIES,
      wordVectorsPath: e.LOCUS_WORD_VECTORS_PATH,
      vectorCacheBytes: e.LOCUS_VECTOR_CACHE_MB * 1024 * 1024,
    },
    signUpsPerHour: e.LOCUS_SIGNUPS_PER_HOUR,
    logLevel: e.LOCUS_LOG_LEVEL,
    adapters: {
      metadataStore: e.LOCUS_METADATA_STORE,
      blobStore: e.LOCUS_BLOB_STORE,
      bus: e.LOCUS_BUS,
      searchIndex: e.LOCUS_SEARCH_INDEX,
      rateLimitStore: e.LOCUS_RATE_LIMIT_STORE,
    },
    postgres: e.DATABASE_URL
      ? {
          url: e.DATABASE_URL,
          schema: e.LOCUS_DATABASE_SCHEMA,
          postingsCacheBytes: e.LOCUS_POSTINGS_CACHE_MB * 1024 * 1024,
        }
      : undefined,
    elasticsearch:
      e.LOCUS_SEARCH_INDEX === "elasticsearch"
        ? {
            node: e.ELASTICSEARCH_URL,
            cloudId: e.ELASTICSEARCH_CLOUD_ID,
            apiKey: e.ELASTICSEARCH_API_KEY,
            username: e.ELASTICSEARCH_USERNAME,
            password: e.ELASTICSEARCH_PASSWORD,
            caCertPath: e.ELASTICSEARCH_CA_CERT,
            requestTimeoutMs: e.ELASTICSEARCH_REQUEST_TIMEOUT_MS,
            maxRetries: e.ELASTICSEARCH_MAX_RETRIES,
            indexPrefix: e.LOCUS_ES_INDEX_PREFIX,
          }
        : undefined,
    amqpUrl: e.AMQP_URL,
    amqpPrefix: e.LOCUS_AMQP_PREFIX,
    redisUrl: e.REDIS_URL,
    s3: e.S3_BUCKET
      ? {
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          endpoint: e.S3_ENDPOINT,
          forcePathStyle: e.S3_FORCE_PATH_STYLE === "true",
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        }
      : undefined,
    internalSecret: e.LOCUS_INTERNAL_SECRET,
    filesUrl: e.LOCUS_FILES_URL?.replace(/\/+$/, ""),
    searchUrl: e.LOCUS_SEARCH_URL?.replace(/\/+$/, ""),
    split,
    serviceName: e.LOCUS_SERVICE_NAME ?? (split ? e.LOCUS_TARGETS.join("+") : "locus"),
  };
}
