// Each user's postings in memory (see UserPostings), loaded on a first quick search and caught up
// with their changes, so most quick searches are scored without SQL.

import type pg from "pg";
import { PostingsCache, UserPostings, type PostingsFile } from "./postings.ts";
import { rollbackAndRelease, unavailableIfDown } from "./postgres-connection.ts";
import { generationOf } from "./postgres-passage-reads.ts";
import type { PostgresTables } from "./postgres-schema.ts";

/** A user's postings read in full: how many passages, how long it took, whether the cache kept them. */
export interface PostingsLoaded {
  userId: string;
  passages: number;
  bytes: number;
  ms: number;
  kept: boolean;
}

type PostingsDbRow = {
  file_id: string;
  id: string;
  term_count: number;
  terms: string;
  repeats: Record<string, number> | null;
};

/** Passages added to a first load of a user's postings between two turns of the event loop. */
const LOAD_SLICE_PASSAGES = 5_000;

/** Loads and keeps users' postings for one index. */
export class PostingsLoader {
  private readonly postings: PostingsCache;
  private readonly loadPostingsInBackground: boolean;
  private readonly onPostingsLoaded: ((loaded: PostingsLoaded) => void) | undefined;
  /** Each user's load or refresh of postings under way: concurrent searches share it. */
  private readonly refreshing = new Map<string, Promise<UserPostings | undefined>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly tables: PostgresTables,
    options: {
      cacheBytes: number;
      loadInBackground: boolean;
      onLoaded: ((loaded: PostingsLoaded) => void) | undefined;
    },
    /** Whether the index is closing, when a first load would be wasted. */
    private readonly isClosed: () => boolean,
  ) {
    this.postings = new PostingsCache(options.cacheBytes);
    this.loadPostingsInBackground = options.loadInBackground;
    this.onPostingsLoaded = options.onLoaded;
  }

  /** The user's postings held now, up to date or not; undefined when the cache is off or has none. */
  held(userId: string): UserPostings | undefined {
    return this.postings.enabled ? this.postings.get(userId) : undefined;
  }

  /**
   * The user's postings in memory, up to date with their passages; undefined where the search is
   * to be scored in SQL instead: the cache is off, the user does not fit it, or their postings are
   * still loading (a first search in this process, unless told to wait). Once loaded, a change to
   * the user's passages is caught up before the search, reading only the files that changed.
   */
  async postingsOf(userId: string): Promise<UserPostings | undefined> {
    if (!this.postings.enabled) return undefined;
    const kept = this.postings.get(userId);
    try {
      if (kept)
        return kept.generation === (await generationOf(this.pool, this.tables, userId))
          ? kept
          : await this.refresh(userId);
      if (!this.postings.mayLoad(userId)) return undefined;
      const load = this.refresh(userId);
      if (!this.loadPostingsInBackground) return await load;
      // The SQL answers meanwhile; a failed load is tried again by a later search.
      load.catch(() => undefined);
      return undefined;
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /**
   * Reads, in one snapshot, the user's generation, their files' versions and the passages of every
   * file not held at its version, and applies them to the user's postings (new ones if none are
   * held). One at a time per user.
   */
  private refresh(userId: string): Promise<UserPostings | undefined> {
    const under = this.refreshing.get(userId);
    if (under) return under;
    const work = (async () => {
      const started = performance.now();
      const client = await this.pool.connect();
      let files: PostingsFile[];
      let removed: string[];
      let generation: string;
      const held = this.postings.get(userId);
      try {
        await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        const current = await client.query<{ generation: string }>(
          `SELECT generation FROM ${this.tables.generations} WHERE user_id = $1`,
          [userId],
        );
        generation = current.rows[0]?.generation ?? "0";
        const versions = await client.query<{ file_id: string; version: string }>(
          `SELECT file_id, version FROM ${this.tables.indexedFiles} WHERE user_id = $1`,
          [userId],
        );
        const now = new Map(versions.rows.map((r) => [r.file_id, r.version]));
        const before = held?.versions() ?? new Map<string, string>();
        removed = [...before.keys()].filter((fileId) => !now.has(fileId));
        const changed = [...now].filter(([fileId, version]) => before.get(fileId) !== version);
        const { rows } =
          changed.length === 0
            ? { rows: [] }
            : await client.query<PostingsDbRow>(
                `SELECT file_id, id, term_count, array_to_string(tsvector_to_array(tsv), ' ') AS terms, repeats
                 FROM ${this.tables.passages}
                 WHERE user_id = $1 ${held ? "AND file_id = ANY($2::text[])" : ""}
                 ORDER BY file_id, ord`,
                held ? [userId, changed.map(([fileId]) => fileId)] : [userId],
              );
        await client.query("COMMIT");
        client.release();
        files = changed.map(([fileId, version]) => ({ fileId, version, rows: [] }));
        const byId = new Map(files.map((f) => [f.fileId, f.rows as PostingsFile["rows"][number][]]));
        for (const row of rows) {
          byId.get(row.file_id)?.push({
            id: String(row.id),
            termCount: row.term_count,
            terms: row.terms === "" ? [] : row.terms.split(" "),
            repeats: row.repeats,
          });
        }
      } catch (err) {
        await rollbackAndRelease(client);
        throw err;
      }
      if (held) {
        held.apply(generation, removed, files);
        return this.postings.keep(userId, held) ? held : undefined;
      }
      // A first load is built a few thousand passages at a time, letting other searches run between:
      // it is not seen by any search until kept.
      const postings = new UserPostings();
      for (let from = 0; from < files.length;) {
        let to = from;
        for (let passages = 0; to < files.length && passages < LOAD_SLICE_PASSAGES; to++) {
          passages += files[to]!.rows.length;
        }
        postings.apply(generation, [], files.slice(from, to));
        from = to;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.isClosed()) return undefined; // shutting down: nothing will search these
      }
      postings.apply(generation, [], []);
      const kept = this.postings.keep(userId, postings);
      this.onPostingsLoaded?.({
        userId,
        passages: postings.passageCount(),
        bytes: postings.bytes(),
        ms: Math.round(performance.now() - started),
        kept,
      });
      return kept ? postings : undefined;
    })();
    this.refreshing.set(userId, work);
    void work.then(
      () => this.refreshing.delete(userId),
      () => this.refreshing.delete(userId),
    );
    return work;
  }
}
