import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { CONSUMER_GROUPS, type Topic } from "@locus/contracts";
import { LocalBlobStore, S3BlobStore, type BlobStore } from "@locus/blob-store";
import { InProcessBus, ObservedBus, RabbitMqBus, type Bus } from "@locus/bus";
import {
  JUDGE_MODEL,
  LocalEmbedder,
  loadLexicon,
  loadWordVectors,
  ModelUnavailableError,
  OpenAiEmbedder,
  SENTENCE_MODEL,
  SentenceEncoder,
  type Embedder,
  type SentenceModel,
} from "@locus/embedder";
import { FairScheduler } from "@locus/cpu-scheduler";
import type { Lexicon } from "@locus/passages";
import { createOcrEngine, type OcrEngine } from "@locus/ocr-reader";
import { OfficeConverter } from "@locus/office-converter";
import { findPoppler, type PopplerTools } from "@locus/pdf-reader";
import {
  moonshineInstalled,
  MoonshineSpeechToText,
  ObservedSpeechToText,
  OpenAiSpeechToText,
  PocketsphinxSpeechToText,
  type SpeechToText,
} from "@locus/speech-to-text";
import { memoryCounters, redisCounters, type LimiterCounters } from "@locus/http";
import { ServiceIdentity } from "@locus/http";
import { LocusMetrics } from "@locus/metrics";
import {
  createPostgresMetadataStore,
  createSqliteMetadataStore,
  type MetadataStore,
} from "@locus/metadata-store";
import { ConfigError, type LocusConfig, type Logger } from "@locus/runtime";
import {
  ElasticsearchSearchIndex,
  PostgresSearchIndex,
  SqliteSearchIndex,
  type SearchIndex,
  type VectorSearchOptions,
} from "@locus/search-index";
import { ExtractiveSummarizer, OpenAiSummarizer, type Summarizer } from "@locus/summarizer";
import { Readiness } from "./readiness.ts";

/** The configured metadata store (not yet migrated): for the server and the operator CLI alike. */
export function createMetadataStore(config: LocusConfig): MetadataStore {
  if (config.adapters.metadataStore === "postgres") {
    if (!config.postgres) throw new Error("DATABASE_URL is not set");
    return createPostgresMetadataStore({
      connectionString: config.postgres.url,
      ...(config.postgres.schema ? { schema: config.postgres.schema } : {}),
    });
  }
  return createSqliteMetadataStore(join(config.dataDir, "metadata.sqlite"));
}

/**
 * Builds each piece of infrastructure once, on first use, from the configured adapter, and
 * closes what was built. Modules ask for what they need; nothing else is opened, so an indexer
 * process never connects to Redis and a gateway never opens the search index.
 */
export class Infrastructure {
  private store?: Promise<MetadataStore>;
  private blobStore?: BlobStore;
  private bus?: Promise<Bus>;
  /** The RabbitMQ adapter under the bus, when that is the bus: what operators' commands reach. */
  private rabbit?: RabbitMqBus;
  private index?: Promise<SearchIndex>;
  private redisClient?: Redis;
  private ocr?: OcrEngine;
  /** Poppler's tools once looked for: null when PDFs are read with pdf.js alone. */
  private poppler?: PopplerTools | null;
  private local?: Promise<LocalEmbedder>;
  private offline?: Promise<Embedder>;
  private judge?: Promise<Embedder | undefined>;
  /** Why the configured sentence encoder could not load, in Locus's words (for responses). */
  private encoderUnavailable?: string;
  private words?: Promise<Lexicon | undefined>;
  private readonly closers: (() => Promise<void>)[] = [];
  private converter?: OfficeConverter;
  private cpu?: FairScheduler;
  private speech?: SpeechToText;

  /** This process's metrics: every module reports to them, /metrics serves them. */
  readonly metrics = new LocusMetrics();
  /** Each piece built here adds its check: what /readyz and the CLI's status report. */
  readonly readiness: Readiness;

  constructor(
    readonly config: LocusConfig,
    private readonly logger: Logger,
    /**
     * How long a call to RabbitMQ (connecting included) may wait; the bus's own 30 s when unset.
     * The operator CLI gives it a share of its deadline.
     */
    private readonly busWaitMs?: number,
  ) {
    this.readiness = new Readiness(logger);
  }

  private postgres() {
    const pg = this.config.postgres;
    if (!pg) throw new Error("DATABASE_URL is not set");
    return { connectionString: pg.url, ...(pg.schema ? { schema: pg.schema } : {}) };
  }

  /**
   * The sentence encoder LOCUS_EMBEDDER=encoder chose, once it has been tried, and why it cannot
   * run here (undefined: it runs); ai mode then runs on the word vectors.
   */
  async sentenceEncoderState(): Promise<{ model: string; unavailable: string | undefined }> {
    await this.offlineEmbedder();
    return { model: SENTENCE_MODEL.name, unavailable: this.encoderUnavailable };
  }

  /** The converter of office documents to PDF (LibreOffice, per LOCUS_SOFFICE_PATH), one per process. */
  officeConverter(): OfficeConverter {
    const { documents } = this.config;
    this.converter ??= new OfficeConverter({
      ...(documents.sofficePath ? { sofficePath: documents.sofficePath } : {}),
      timeoutMs: documents.convertTimeoutMs,
      memoryMb: documents.convertMemoryMb,
      cpu: this.cpuSlots(),
    });
    return this.converter;
  }

  /**
   * Where every extractor of this process runs its CPU-heavy child processes: at most
   * LOCUS_CPU_SLOTS at once, the files in hand served in turn, so a voice memo's chunks are not
   * stuck behind a scan's pages. One per process, whatever the extractors it runs.
   */
  cpuSlots(): FairScheduler {
    if (!this.cpu) {
      const cpu = new FairScheduler({
        slots: this.config.cpuSlots,
        observer: { waited: (ms) => this.metrics.cpuWaited(ms / 1000) },
      });
      this.metrics.watchCpuSlots(() => cpu.stats());
      this.cpu = cpu;
    }
    return this.cpu;
  }

  /**
   * The configured speech-to-text engine (checked by the audio extractor when it starts), timing
   * each chunk for metrics: one per process, which the audio and video extractors and the
   * dashboard's notices share.
   */
  speechToText(): SpeechToText {
    if (!this.speech) {
      const engine = this.speechEngine();
      this.speech = new ObservedSpeechToText(engine, this.metrics, engine.name);
    }
    return this.speech;
  }

  /**
   * LOCUS_SPEECH_ENGINE's engine; unset, the best offline one installed: Moonshine when
   * `pnpm install` fetched its model, else pocketsphinx. Moonshine's words are placed in time by
   * pocketsphinx's forced alignment when that is installed (see MoonshineSpeechToText).
   */
  private speechEngine(): SpeechToText {
    const { speech, openai } = this.config;
    const pocketsphinx = () =>
      new PocketsphinxSpeechToText({ modelDir: speech.pocketsphinxModelDir, cpu: this.cpuSlots() });
    const engine = speech.engine ?? (moonshineInstalled(speech.modelDir) ? "moonshine" : "pocketsphinx");
    if (engine === "moonshine") {
      return new MoonshineSpeechToText({
        ...(speech.modelDir ? { modelDir: speech.modelDir } : {}),
        cpu: this.cpuSlots(),
        aligner: pocketsphinx(),
      });
    }
    if (engine === "openai") {
      if (!openai.apiKey) throw new Error("OPENAI_API_KEY is not set");
      return new OpenAiSpeechToText({
        baseURL: openai.baseUrl,
        apiKey: openai.apiKey,
        model: openai.transcribeModel,
        timeoutMs: openai.timeoutMs,
        maxRetries: openai.maxRetries,
      });
    }
    return pocketsphinx();
  }

  /**
   * The offline embedder, one per process (its word vectors take about 100 MB): loaded on first
   * use, converted from the npm package first if `pnpm install` did not already.
   */
  localEmbedder(): Promise<LocalEmbedder> {
    this.local ??= (async () => {
      const vectors = await loadWordVectors(this.config.ai.wordVectorsPath, (message) =>
        this.logger.info(message),
      );
      return new LocalEmbedder(vectors);
    })();
    return this.local;
  }

  /**
   * The offline engine of the `local` vector slot, one per process: the sentence encoder with
   * LOCUS_EMBEDDER=encoder, otherwise the word vectors. An encoder that cannot load (its model
   * files missing or altered, or no runtime for this machine) leaves the word vectors in its place
   * and /readyz says `sentence_encoder: degraded` with the reason in the log; nothing stops.
   */
  offlineEmbedder(): Promise<Embedder> {
    this.offline ??= (async () => {
      if (this.config.ai.embedder !== "encoder") return this.localEmbedder();
      try {
        return await this.loadSentenceModel(SENTENCE_MODEL);
      } catch (err) {
        this.logger.error(
          { err },
          `the sentence encoder ${SENTENCE_MODEL.name} cannot load: ai mode runs on the word vectors`,
        );
        // The log has the details (paths, the runtime's words); a response gets Locus's sentence.
        this.encoderUnavailable =
          err instanceof ModelUnavailableError
            ? "its model files are missing or not the pinned ones (pnpm install fetches them)"
            : "it could not be loaded on this machine";
        this.readiness.add(
          "sentence_encoder",
          () => Promise.reject(err instanceof Error ? err : new Error(String(err))),
          { optional: true },
        );
        return this.localEmbedder();
      }
    })();
    return this.offline;
  }

  /** One of the pinned sentence models from LOCUS_MODELS_DIR, closed with the process. */
  private async loadSentenceModel(model: SentenceModel): Promise<SentenceEncoder> {
    const encoder = await SentenceEncoder.load({
      model,
      ...(this.config.ai.modelsDir ? { modelsDir: this.config.ai.modelsDir } : {}),
    });
    this.closers.push(() => encoder.close());
    return encoder;
  }

  /**
   * The engines that embed passages (`indexing`, patient: a file can wait) or questions (`search`,
   * quick to give up, since a caller waits and the local vectors can answer instead).
   */
  async embedders(purpose: "indexing" | "search"): Promise<{
    local: Embedder;
    remote?: Embedder;
    unavailable?: { engine: string; reason: string };
  }> {
    const local = await this.offlineEmbedder();
    const { ai, openai } = this.config;
    if (ai.embedder !== "openai")
      return this.encoderUnavailable
        ? { local, unavailable: { engine: SENTENCE_MODEL.name, reason: this.encoderUnavailable } }
        : { local };
    if (!openai.apiKey) throw new Error("OPENAI_API_KEY is not set");
    const patience =
      purpose === "indexing"
        ? { timeoutMs: openai.timeoutMs, maxRetries: openai.maxRetries }
        : { timeoutMs: ai.timeoutMs, maxRetries: ai.maxRetries };
    const remote = new OpenAiEmbedder({
      baseURL: openai.baseUrl,
      apiKey: openai.apiKey,
      model: openai.embedModel,
      ...(openai.embedDimensions ? { dimensions: openai.embedDimensions } : {}),
      ...patience,
    });
    return { local, remote };
  }

  /**
   * The answer judge of the extractive summary (JUDGE_MODEL, see ExtractiveSummarizer's `judge`),
   * one per process, with LOCUS_EMBEDDER=encoder: where the sentence encoder cannot run, neither
   * can it. One that cannot load leaves the summary judged by its embedder alone, and /readyz says
   * `answer_judge: degraded` with the reason in the log; nothing stops.
   */
  answerJudge(): Promise<Embedder | undefined> {
    this.judge ??= (async () => {
      if (this.config.ai.embedder !== "encoder") return undefined;
      try {
        return await this.loadSentenceModel(JUDGE_MODEL);
      } catch (err) {
        this.logger.error(
          { err },
          `the answer judge ${JUDGE_MODEL.name} cannot load: ai summaries answer more questions the documents do not answer`,
        );
        this.readiness.add(
          "answer_judge",
          () => Promise.reject(err instanceof Error ? err : new Error(String(err))),
          { optional: true },
        );
        return undefined;
      }
    })();
    return this.judge;
  }

  /** The summary engines of ai search: the extractive one always, a chat model when configured. */
  async summarizers(): Promise<{ local: Summarizer; remote?: Summarizer }> {
    const embedder = await this.localEmbedder();
    const lexicon = await this.lexicon();
    const judge = await this.answerJudge();
    // Sentences are compared with the question by the offline engine (the sentence encoder when it
    // is the one: on the dev questions about real manuals it stated 14 of 20 answers where the word
    // vectors stated 12, false answers 1 of 8 either way); single words by the word vectors.
    const local = new ExtractiveSummarizer(await this.offlineEmbedder(), {
      wordWeight: (word) => embedder.weight(word),
      wordVector: (word) => embedder.wordVector(word),
      ...(lexicon ? { lexicon } : {}),
      ...(judge ? { judge } : {}),
    });
    const { ai, openai } = this.config;
    if (ai.summarizer !== "openai") return { local };
    if (!openai.apiKey) throw new Error("OPENAI_API_KEY is not set");
    const remote = new OpenAiSummarizer({
      baseURL: openai.baseUrl,
      apiKey: openai.apiKey,
      model: openai.chatModel,
      timeoutMs: ai.timeoutMs,
      maxRetries: ai.maxRetries,
    });
    return { local, remote };
  }

  /**
   * The English lexicon that tells words broken at line ends from compounds (OCR and screen
   * text, and the sentences an ai summary reads; PDF workers load their own), one per process. Without the word list, every break is
   * joined, and the log says so.
   */
  lexicon(): Promise<Lexicon | undefined> {
    this.words ??= loadLexicon().catch((err: unknown) => {
      this.logger.warn({ err }, "no English word list: words hyphenated at line ends are always joined");
      return undefined;
    });
    return this.words;
  }

  /**
   * Poppler's tools when PDFs are to be read with them (LOCUS_PDF_ENGINE), looked for once per
   * process and said in the log; undefined for pdf.js alone. `poppler` without the tools is a
   * setting to fix, and stops the start.
   */
  pdfTools(): PopplerTools | undefined {
    if (this.poppler === undefined) {
      const engine = this.config.pdfEngine;
      const tools = engine === "pdfjs" ? undefined : findPoppler();
      if (engine === "poppler" && !tools) {
        throw new ConfigError([
          "LOCUS_PDF_ENGINE=poppler, but pdftotext, pdfinfo and pdftoppm are not all on the PATH: " +
            "install poppler-utils (Debian: apt-get install poppler-utils), or set LOCUS_PDF_ENGINE=auto or pdfjs",
        ]);
      }
      if (tools) {
        this.logger.info(
          { pdfEngine: "poppler", version: tools.version, kernelBounds: Object.keys(tools.bounds) },
          "PDFs are read with Poppler's tools, and with pdf.js where they fail",
        );
      } else {
        this.logger.info(
          { pdfEngine: "pdfjs" },
          engine === "auto"
            ? "PDFs are read with pdf.js (Poppler's tools are not installed)"
            : "PDFs are read with pdf.js",
        );
      }
      this.poppler = tools ?? null;
    }
    return this.poppler ?? undefined;
  }

  /**
   * The OCR engine, one per process: the image and PDF extractors share its recognisers. Finds
   * the language models now, so a missing package stops the start; the recognisers themselves
   * start on the first image.
   */
  ocrEngine(): OcrEngine {
    if (!this.ocr) {
      const engine = createOcrEngine({
        engine: this.config.ocr.engine,
        tesseractPath: this.config.ocr.tesseractPath,
        models: this.config.ocr.models,
        languages: this.config.ocr.languages,
        workers: this.config.ocr.workers,
        cpu: this.cpuSlots(),
        timeoutMs: this.config.ocr.timeoutMs,
        observer: this.metrics,
      });
      this.logger.info(
        { ocrEngine: engine.kind, workers: engine.workers },
        `Images are read with ${engine.description}`,
      );
      this.closers.push(() => engine.close());
      this.ocr = engine;
    }
    return this.ocr;
  }

  metadataStore(): Promise<MetadataStore> {
    this.store ??= (async () => {
      const store = createMetadataStore(this.config);
      this.closers.push(() => store.close());
      // A gateway of the split shape stays ready through a database blip: out of service, every
      // replica at once would leave clients the load balancer's bare errors; in service, each
      // request gets Locus's own 503 with its reason, and requests that need no record still work
      // (the docs, the sandbox's previews). The files and search services, which cannot work
      // without it, still leave their Services.
      this.readiness.add("metadata_store", () => store.check(), {
        optional: this.config.split && this.config.targets.includes("gateway"),
      });
      await store.migrate();
      return store;
    })();
    return this.store;
  }

  /**
   * The configured S3 store (null when the blob store is local). `credentials` replaces the
   * configured ones, for a store that only shapes URLs and never reaches S3.
   */
  private s3Store(credentials?: { accessKeyId: string; secretAccessKey: string }): S3BlobStore | null {
    const s3 = this.config.s3;
    if (this.config.adapters.blobStore !== "s3" || !s3) return null;
    return new S3BlobStore({
      bucket: s3.bucket,
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: s3.forcePathStyle,
      createBucket: s3.createBucket,
      accessKeyId: credentials?.accessKeyId ?? s3.accessKeyId,
      secretAccessKey: credentials?.secretAccessKey ?? s3.secretAccessKey,
    });
  }

  blobs(): BlobStore {
    if (!this.blobStore) {
      const store = this.s3Store() ?? new LocalBlobStore(join(this.config.dataDir, "blobs"));
      this.readiness.add("blob_store", () => store.check());
      this.blobStore = store;
    }
    return this.blobStore;
  }

  /**
   * Where the blob store's own preview links point (the origin of an S3 presigned URL), for the
   * dashboard's Content-Security-Policy; undefined when Locus serves previews. The URL is signed
   * with stand-in credentials (the origin depends only on endpoint, region, bucket and path style):
   * nothing is sent to S3 or to a credentials service, and the gateway does not depend on them.
   */
  async previewOrigin(): Promise<string | undefined> {
    const store = this.s3Store({ accessKeyId: "origin-only", secretAccessKey: "origin-only" });
    if (!store) return undefined;
    try {
      const url = await store.presignedGetUrl("origin", {
        expiresInSeconds: 60,
        contentType: "application/pdf",
        fileName: "origin.pdf",
      });
      return new URL(url).origin;
    } finally {
      store.close();
    }
  }

  /**
   * Removes what a crash left half-written in the blob store (the local one leaves temporary
   * files). Only for the process that owns the data directory (the all-in-one shape), at start,
   * before anything writes.
   */
  async sweepLocalBlobs(): Promise<void> {
    if (this.config.split) return;
    await this.blobs().sweepTemporaryFiles?.();
  }

  messageBus(): Promise<Bus> {
    this.bus ??= (async () => {
      const logger = this.logger.child({ component: "bus" });
      let bus: Bus;
      if (this.config.adapters.bus === "rabbitmq" && this.config.amqpUrl) {
        const rabbit = new RabbitMqBus({
          url: this.config.amqpUrl,
          logger,
          prefix: this.config.amqpPrefix,
          workQueue: {
            type: this.config.busQueueType,
            deliveryLimit: this.config.busDeliveryLimit,
            consumerTimeoutMs: consumerTimeoutMs(this.config.speech.maxDurationS),
          },
          connectionName: `locus ${this.config.serviceName}`,
          ...(this.busWaitMs === undefined ? {} : { operationTimeoutMs: this.busWaitMs }),
        });
        this.rabbit = rabbit;
        try {
          await rabbit.connect();
          // Every group's queue exists before anything is published, whichever process starts first.
          await rabbit.declareGroups(consumerGroupsOf(this.config));
        } catch (err) {
          // Its reconnection loop would otherwise go on for ever, and keep the process alive.
          await rabbit.close();
          throw err;
        }
        bus = rabbit;
      } else {
        bus = new InProcessBus(logger);
      }
      // Queue depths are the files service's to report, for every group (see the files module).
      const observed = new ObservedBus(bus, this.metrics);
      this.readiness.add("bus", () => observed.check());
      return observed;
    })();
    return this.bus;
  }

  /** The broker under the bus (connected, every group declared), or undefined on the in-process bus. */
  async broker(): Promise<RabbitMqBus | undefined> {
    await this.messageBus();
    return this.rabbit;
  }

  /** True when messages live only in this process: after a restart, all unfinished work is redone. */
  get busIsInProcess(): boolean {
    return this.config.adapters.bus === "memory";
  }

  searchIndex(): Promise<SearchIndex> {
    this.index ??= (async () => {
      const index = await this.createSearchIndex();
      await index.check();
      this.closers.push(() => index.close());
      this.readiness.add("search_index", () => index.check());
      return index;
    })();
    return this.index;
  }

  /** How the SQLite and Postgres indexes keep and search users' vectors in this process. */
  private vectorSearchOptions(): VectorSearchOptions {
    return {
      vectorCacheBytes: this.config.ai.vectorCacheBytes,
      vectorCacheObserver: this.metrics,
      approximateIndexMinVectors: this.config.ai.approximateIndexMinVectors,
      onApproximateIndexError: (err) =>
        this.logger.error(
          { err },
          "a user's approximate vector index failed to build: their ai searches scan every vector",
        ),
    };
  }

  private async createSearchIndex(): Promise<SearchIndex> {
    switch (this.config.adapters.searchIndex) {
      case "postgres":
        return new PostgresSearchIndex({
          ...this.postgres(),
          ...this.vectorSearchOptions(),
          postingsCacheBytes: this.config.postgres?.postingsCacheBytes,
          onPostingsLoaded: ({ userId, passages, bytes, ms, kept }) =>
            this.logger.info(
              { userId, passages, mb: Math.round(bytes / 1e5) / 10, ms, kept },
              kept
                ? "a user's postings are loaded: their quick searches are scored in memory"
                : "a user's postings are larger than LOCUS_POSTINGS_CACHE_MB: their quick searches stay in SQL",
            ),
        });
      case "elasticsearch": {
        const es = this.config.elasticsearch;
        if (!es) throw new Error("Elasticsearch is not configured");
        return new ElasticsearchSearchIndex({
          ...(es.node ? { node: es.node } : {}),
          ...(es.cloudId ? { cloudId: es.cloudId } : {}),
          ...(es.apiKey ? { apiKey: es.apiKey } : {}),
          ...(es.username && es.password ? { username: es.username, password: es.password } : {}),
          ...(es.caCertPath ? { caCertificate: await readFile(es.caCertPath, "utf8") } : {}),
          requestTimeoutMs: es.requestTimeoutMs,
          maxRetries: es.maxRetries,
          indexPrefix: es.indexPrefix,
          // The local slot holds the sentence encoder's vectors, or the word vectors' (100, the default).
          ...(this.config.ai.embedder === "encoder" ? { localVectorDims: SENTENCE_MODEL.dimensions } : {}),
          // Known only when asked of the model; otherwise the cluster takes the first vector's.
          ...(this.config.ai.embedder === "openai" && this.config.openai.embedDimensions
            ? { remoteVectorDims: this.config.openai.embedDimensions }
            : {}),
        });
      }
      case "sqlite":
        return new SqliteSearchIndex(join(this.config.dataDir, "index.sqlite"), {
          ...this.vectorSearchOptions(),
        });
    }
  }

  /**
   * Where rate limits and sign-in attempts are counted: in Redis when configured, shared by every
   * gateway (each counting in its own memory while Redis is away); otherwise in this process.
   */
  limiterCounters(): LimiterCounters {
    const redis = this.redis();
    return redis ? redisCounters(redis) : memoryCounters;
  }

  /** The Redis client of shared rate-limit counters, when configured. */
  private redis(): Redis | undefined {
    if (this.config.adapters.rateLimitStore !== "redis" || !this.config.redisUrl) return undefined;
    if (!this.redisClient) {
      const client = new Redis(this.config.redisUrl, {
        // Fail a command quickly when Redis is away: the limiter then counts in memory.
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        connectTimeout: 2000,
      });
      client.on("error", (err: Error) => this.logger.warn({ err: err.message }, "redis connection problem"));
      this.closers.push(async () => {
        await client.quit().catch(() => client.disconnect());
      });
      // Without Redis each gateway counts rate limits and sign-in attempts on its own.
      this.readiness.add(
        "redis",
        async () => {
          await client.ping();
        },
        { optional: true },
      );
      this.redisClient = client;
    }
    return this.redisClient;
  }

  /** Signs and checks the calls between services, in the split shape. */
  serviceIdentity(): ServiceIdentity | undefined {
    return this.config.internalSecret ? new ServiceIdentity(this.config.internalSecret) : undefined;
  }

  /**
   * The secret that signs preview links: from LOCUS_SIGNING_SECRET, or made once and kept in the
   * data directory (readable by its owner only) so links survive a restart.
   */
  async signingSecret(): Promise<string> {
    if (this.config.signingSecret) return this.config.signingSecret;
    const path = join(this.config.dataDir, "signing.key");
    try {
      return (await readFile(path, "utf8")).trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    await mkdir(this.config.dataDir, { recursive: true });
    const secret = randomBytes(32).toString("base64url");
    try {
      await writeFile(path, secret, { mode: 0o600, flag: "wx" });
      return secret;
    } catch (err) {
      // Another process made it first: use theirs.
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return (await readFile(path, "utf8")).trim();
      throw err;
    }
  }

  /** Stops message delivery and waits for handlers in flight: the first step of a clean stop. */
  async drainBus(): Promise<void> {
    // A bus that never connected has nothing to drain (and has closed its connection attempts).
    if (this.bus) await (await this.bus.catch(() => undefined))?.close();
  }

  async close(): Promise<void> {
    // The bus first: it waits for handlers in flight, which still use the store and the index.
    await this.drainBus().catch((err: unknown) => this.logger.error({ err }, "failed to close the bus"));
    for (const close of this.closers.reverse()) {
      try {
        await close();
      } catch (err) {
        this.logger.error({ err }, "failed to close a dependency");
      }
    }
    this.closers.length = 0;
  }
}

/**
 * The consumer groups this deployment has: every one, but the meaning stage's (`encoder`) only
 * where it runs, since a group's queue keeps every message published to it, consumed or not.
 */
export function consumerGroupsOf(config: LocusConfig): Readonly<Record<string, readonly Topic[]>> {
  if (config.meaningStage) return CONSUMER_GROUPS;
  const { encoder: _notHere, ...groups } = CONSUMER_GROUPS;
  return groups;
}

/**
 * How long a delivery may be held before RabbitMQ (3.12 on) closes its consumer's channel: the
 * longest work any group does, a video of the longest allowed length read at 0.75 s a second
 * (twice the measured speech and frame speeds, as the extractors' grace periods in k8s/base
 * assume), with five minutes to spare; never below RabbitMQ's own default of 30 minutes.
 */
export function consumerTimeoutMs(maxMediaDurationS: number): number {
  return Math.max(30 * 60, Math.ceil(maxMediaDurationS * 0.75) + 300) * 1000;
}
