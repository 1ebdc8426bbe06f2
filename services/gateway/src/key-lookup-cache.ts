import type { ApiKeyStore, KeyChange, KeyChangeListener } from "@locus/metadata-store";

/** How the gateway finds the key of a request: by its hash, with its owner. */
export type KeyLookup = Pick<ApiKeyStore, "findActiveKeyByHash">;

type Found = NonNullable<Awaited<ReturnType<ApiKeyStore["findActiveKeyByHash"]>>>;

/** A lookup is used this long at most, even when no change was heard: a bound on any surprise. */
const MAX_AGE_MS = 30_000;
/** Keys kept at most; the oldest go first. */
const MAX_ENTRIES = 10_000;

/**
 * The gateway's key lookups, kept while the store tells of every change to keys and their owners
 * (see MetadataStore.watchKeyChanges): a search then costs no database round trip for its key,
 * the largest fixed cost of a request after the hop itself (#39). Revoking a key, renaming it or
 * changing its owner drops it here on this process's next request after the change is committed
 * (told by the database's notice, or at once when made through this process's store). While the
 * store is not listening (never, on SQLite; or after a lost connection until it listens again)
 * every request looks its key up, as without a cache. Unknown keys are never kept, so a new key
 * works at once.
 */
export class KeyLookupCache implements KeyLookup, KeyChangeListener {
  private readonly entries = new Map<string, { found: Found; at: number }>();
  private listening = false;
  /**
   * Moves on with every change heard: a lookup that began before a change is not kept, since it
   * may have read the row as it was (the change's notice came while it was under way).
   */
  private generation = 0;

  constructor(
    private readonly store: KeyLookup,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while changes are heard, so lookups are kept. */
  get isListening(): boolean {
    return this.listening;
  }

  async findActiveKeyByHash(hash: string): Promise<Found | null> {
    const kept = this.entries.get(hash);
    if (kept) {
      if (this.listening && this.now() - kept.at < MAX_AGE_MS) return kept.found;
      this.entries.delete(hash);
    }
    const generation = this.generation;
    const found = await this.store.findActiveKeyByHash(hash);
    if (found && this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, { found, at: this.now() });
    }
    return found;
  }

  changed(change: KeyChange): void {
    this.generation++;
    for (const [hash, { found }] of this.entries) {
      if ("keyId" in change ? found.key.id === change.keyId : found.user.id === change.userId) {
        this.entries.delete(hash);
      }
    }
  }

  live(): void {
    // Whatever changed while nobody listened is unknown: start afresh.
    this.forget();
    this.listening = true;
  }

  lost(): void {
    this.listening = false;
    this.forget();
  }

  private forget(): void {
    this.generation++;
    this.entries.clear();
  }
}
