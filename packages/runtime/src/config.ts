import { z } from "zod";

/**
 * The only place that reads process.env. Every setting is validated once at start; a bad value
 * stops the process with one message that names every problem.
 */
export const TARGETS = ["all", "gateway", "files", "extractor-pdf", "indexer", "search"] as const;
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
  LOCUS_SIGNING_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  LOCUS_MAX_UPLOAD_BYTES: int(100 * 1024 * 1024, 1),
  LOCUS_RATE_LIMIT_FREE: int(5, 1),
  LOCUS_RATE_LIMIT_PRO: int(50, 1),
  LOCUS_RATE_LIMIT_ENTERPRISE: int(500, 1),
  LOCUS_QUOTA_FREE: int(100, 0),
  LOCUS_QUOTA_PRO: int(10_000, 0),
  LOCUS_QUOTA_ENTERPRISE: int(0, 0),
  LOCUS_EXTRACT_CONCURRENCY: int(2, 1, 64),
  LOCUS_MAX_ATTEMPTS: int(3, 1, 20),
  LOCUS_PDF_PAGE_TIMEOUT_MS: int(60_000, 100),
  LOCUS_EXTRACT_MAX_HEAP_MB: int(1024, 64),
  LOCUS_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  LOCUS_METADATA_STORE: z.enum(["sqlite"]).default("sqlite"),
  LOCUS_BLOB_STORE: z.enum(["local"]).default("local"),
  LOCUS_BUS: z.enum(["memory"]).default("memory"),
  LOCUS_SEARCH_INDEX: z.enum(["sqlite"]).default("sqlite"),
});

export type Plan = "free" | "pro" | "enterprise";

export interface LocusConfig {
  host: string;
  port: number;
  dataDir: string;
  targets: Target[];
  /** Base of links Locus hands out (preview URLs); when unset, taken from the request's Host. */
  publicUrl: string | undefined;
  /** Signs preview tokens; when unset, a random secret is kept in the data directory. */
  signingSecret: string | undefined;
  maxUploadBytes: number;
  /** Requests per second per account. */
  rateLimits: Record<Plan, number>;
  /** Live uploads per calendar month (UTC) per account; 0 means unlimited. */
  monthlyUploadQuota: Record<Plan, number>;
  extractConcurrency: number;
  maxAttempts: number;
  /** One PDF page taking longer than this fails the file (stuck or hostile PDFs). */
  pdfPageTimeoutMs: number;
  /** Heap of one extraction thread; a file needing more fails instead of the process. */
  extractMaxHeapMb: number;
  logLevel: z.infer<typeof EnvSchema>["LOCUS_LOG_LEVEL"];
  adapters: {
    metadataStore: "sqlite";
    blobStore: "local";
    bus: "memory";
    searchIndex: "sqlite";
  };
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
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: e.LOCUS_DATA_DIR,
    targets: e.LOCUS_TARGETS,
    publicUrl: e.LOCUS_PUBLIC_URL,
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
    pdfPageTimeoutMs: e.LOCUS_PDF_PAGE_TIMEOUT_MS,
    extractMaxHeapMb: e.LOCUS_EXTRACT_MAX_HEAP_MB,
    logLevel: e.LOCUS_LOG_LEVEL,
    adapters: {
      metadataStore: e.LOCUS_METADATA_STORE,
      blobStore: e.LOCUS_BLOB_STORE,
      bus: e.LOCUS_BUS,
      searchIndex: e.LOCUS_SEARCH_INDEX,
    },
  };
}
