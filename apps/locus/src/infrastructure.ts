import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LocalBlobStore, type BlobStore } from "@locus/blob-store";
import { InProcessBus, type Bus } from "@locus/bus";
import { createSqliteMetadataStore, type MetadataStore } from "@locus/metadata-store";
import type { LocusConfig, Logger } from "@locus/runtime";
import { SqliteSearchIndex, type SearchIndex } from "@locus/search-index";

/**
 * Builds each piece of infrastructure once, on first use, from the configured adapter, and
 * closes what was built in reverse order. Modules ask for what they need; nothing else is opened.
 */
export class Infrastructure {
  private store?: Promise<MetadataStore>;
  private blobStore?: BlobStore;
  private bus?: Bus;
  private index?: SearchIndex;
  private readonly closers: (() => Promise<void>)[] = [];

  constructor(
    readonly config: LocusConfig,
    private readonly logger: Logger,
  ) {}

  metadataStore(): Promise<MetadataStore> {
    this.store ??= (async () => {
      const store = createSqliteMetadataStore(join(this.config.dataDir, "metadata.sqlite"));
      await store.migrate();
      this.closers.push(() => store.close());
      return store;
    })();
    return this.store;
  }

  blobs(): BlobStore {
    this.blobStore ??= new LocalBlobStore(join(this.config.dataDir, "blobs"));
    return this.blobStore;
  }

  /**
   * Removes what a crash left half-written in the local blob store. Only for the process that owns
   * the data directory (the all-in-one shape), at start, before anything writes.
   */
  async sweepLocalBlobs(): Promise<void> {
    const blobs = this.blobs();
    if (blobs instanceof LocalBlobStore) await blobs.sweepTemporaryFiles();
  }

  messageBus(): Bus {
    this.bus ??= new InProcessBus(this.logger.child({ component: "bus" }));
    return this.bus;
  }

  /** True when messages live only in this process: after a restart, all unfinished work is redone. */
  get busIsInProcess(): boolean {
    return this.config.adapters.bus === "memory";
  }

  searchIndex(): SearchIndex {
    if (!this.index) {
      const index = new SqliteSearchIndex(join(this.config.dataDir, "index.sqlite"));
      this.closers.push(() => index.close());
      this.index = index;
    }
    return this.index;
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

  /** State of what has been built, for /readyz. */
  async readiness(): Promise<Record<string, string>> {
    const checks: Record<string, () => Promise<void>> = {};
    if (this.store) {
      const store = this.store;
      checks.metadata_store = async () => (await store).check();
    }
    if (this.blobStore) checks.blob_store = () => this.blobs().check();
    if (this.index) checks.search_index = () => this.searchIndex().check();
    if (this.bus) checks.bus = () => this.messageBus().check();
    const entries = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await check();
          return [name, "ok"] as const;
        } catch (err) {
          this.logger.warn({ err, dependency: name }, "readiness check failed");
          return [name, "unavailable"] as const;
        }
      }),
    );
    return Object.fromEntries(entries);
  }

  /** Stops message delivery and waits for handlers in flight: the first step of a clean stop. */
  async drainBus(): Promise<void> {
    await this.bus?.close();
  }

  async close(): Promise<void> {
    // The bus first: it waits for handlers in flight, which still use the store and the index.
    if (this.bus) this.closers.push(() => this.messageBus().close());
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
