import { BM25_B, BM25_K1, bm25Idf } from "./bm25.ts";

/** A passage as the PostgreSQL index hands it to memory: its id, length and terms. */
export interface PostingsRow {
  id: string;
  /** Its terms, repeats included: its length for BM25. */
  termCount: number;
  /** Its distinct terms. */
  terms: readonly string[];
  /** The terms it holds more than once, with their counts. */
  repeats: Readonly<Record<string, number>> | null;
}

/** One indexed file's passages, and the version of the file they are (see PostgresSearchIndex). */
export interface PostingsFile {
  fileId: string;
  version: string;
  rows: readonly PostingsRow[];
}

/** A passage's id and BM25 score (the raw sum, before normaliseScore). */
export interface ScoredId {
  id: string;
  score: number;
}

/** A posting list: passages (as slots of UserPostings) holding a term, and how often each does. */
interface PostingList {
  docs: Uint32Array;
  tfs: Uint32Array;
  length: number;
}

/** Slots of removed files kept before the lists are rewritten without them. */
const DEAD_SHARE_BEFORE_COMPACTION = 0.25;

/**
 * One user's passages as an inverted index in memory, for the PostgreSQL index's quick search: a
 * query of very common words matches most of a user's passages, and scoring every match in SQL
 * costs ~100 ms at 100k passages whatever the index, where walking posting lists here costs ~1 ms.
 * It holds only what BM25 needs (ids, lengths, term counts); the text stays in PostgreSQL.
 *
 * Kept up to date file by file: a file's passages are appended to the lists, a removed or replaced
 * file's slots are marked dead and skipped, and the lists are rewritten once a quarter is dead.
 * The user's statistics are counted here from the live passages, so they are those of the snapshot
 * the passages were read in.
 */
export class UserPostings {
  /** The user's generation (PostgreSQL's `vector_generations`) these passages are. */
  generation = "";
  private ids = new Float64Array(0);
  private lengths: Uint32Array = new Uint32Array(0);
  private alive = new Uint8Array(0);
  /** A search's scratch: each slot's score, and the slots scored (a growing JS array is 40× slower). */
  private scores = new Float64Array(0);
  private touched = new Uint32Array(0);
  private slots = 0;
  private deadSlots = 0;
  private livePassages = 0;
  private liveTerms = 0;
  private readonly files = new Map<string, { version: string; from: number; to: number }>();
  private readonly termIds = new Map<string, number>();
  private readonly lists: PostingList[] = [];

  /** Each indexed file's version as held here. */
  versions(): ReadonlyMap<string, string> {
    return new Map([...this.files].map(([fileId, f]) => [fileId, f.version]));
  }

  /** Drops the files in `removed` and adds (or replaces) those in `added`, then becomes `generation`. */
  apply(generation: string, removed: Iterable<string>, added: readonly PostingsFile[]): void {
    for (const fileId of removed) this.remove(fileId);
    // New postings are gathered per term in plain arrays, then each list grows once: growing typed
    // arrays posting by posting made most of a load's time (and its garbage).
    const pending = new Map<number, number[]>();
    for (const file of added) {
      this.remove(file.fileId);
      this.add(file, pending);
    }
    for (const [termId, posts] of pending) this.append(this.lists[termId]!, posts);
    if (this.deadSlots > this.slots * DEAD_SHARE_BEFORE_COMPACTION) this.compact();
    this.generation = generation;
  }

  /**
   * The `limit` best passages for `terms` (distinct) by BM25 on these passages' statistics, best
   * first, ties in id order: the same order and, to the last bits of a logarithm, the same scores
   * as the SQL of PostgresSearchIndex. With `onlyFiles`, only passages of those files are scored
   * (the statistics stay the user's whole ones, as in SQL): the filter comes before the best are taken.
   */
  top(terms: readonly string[], limit: number, onlyFiles?: ReadonlySet<string>): ScoredId[] {
    if (limit <= 0 || this.livePassages === 0) return [];
    let allowed: Uint8Array | undefined;
    if (onlyFiles) {
      allowed = new Uint8Array(this.slots);
      for (const fileId of onlyFiles) {
        const file = this.files.get(fileId);
        if (file) allowed.fill(1, file.from, file.to);
      }
    }
    const avgLength = Math.max(this.liveTerms / this.livePassages, 1e-9);
    // Reused (scores zeroed where touched afterwards): allocating them at every search costs more
    // than scoring a rare word.
    if (this.scores.length < this.slots) {
      this.scores = new Float64Array(this.ids.length);
      this.touched = new Uint32Array(this.ids.length);
    }
    const { scores, touched, alive, lengths } = this;
    let seen = 0;
    // Locals, not module bindings, in the loop below (the same operations as bm25Score's, in order).
    const k1 = BM25_K1;
    const b = BM25_B;
    for (const term of terms) {
      const termId = this.termIds.get(term);
      if (termId === undefined) continue;
      const { docs, tfs, length } = this.lists[termId]!;
      const idf = bm25Idf(this.livePassages, this.liveCount(this.lists[termId]!));
      for (let i = 0; i < length; i++) {
        const doc = docs[i]!;
        if (alive[doc] === 0 || (allowed !== undefined && allowed[doc] === 0)) continue;
        const tf = tfs[i]!;
        const norm = k1 * (1 - b + (b * lengths[doc]!) / avgLength);
        // Every contribution is above 0 (idf has a floor), so 0 means "not seen yet".
        const before = scores[doc]!;
        if (before === 0) touched[seen++] = doc;
        scores[doc] = before + (idf * tf * (k1 + 1)) / (tf + norm);
      }
    }
    const best = bestOf(touched.subarray(0, seen), scores, this.ids, limit);
    for (let i = 0; i < seen; i++) scores[touched[i]!] = 0;
    return best;
  }

  /** Passages held that are not dead (those of the files at their current version). */
  passageCount(): number {
    return this.livePassages;
  }

  /** Memory held, roughly: what the cache's budget counts. */
  bytes(): number {
    // The search's scratch is made at the first search: 12 bytes a slot.
    let bytes = this.ids.byteLength * 2.5 + this.lengths.byteLength + this.alive.byteLength;
    for (const list of this.lists) bytes += list.docs.byteLength + list.tfs.byteLength + 64;
    // A term's key in the map: its characters and the entry.
    for (const term of this.termIds.keys()) bytes += 2 * term.length + 48;
    return bytes + this.files.size * 128;
  }

  private liveCount(list: PostingList): number {
    if (this.deadSlots === 0) return list.length;
    let n = 0;
    for (let i = 0; i < list.length; i++) n += this.alive[list.docs[i]!]!;
    return n;
  }

  private remove(fileId: string): void {
    const file = this.files.get(fileId);
    if (!file) return;
    this.files.delete(fileId);
    for (let doc = file.from; doc < file.to; doc++) {
      this.alive[doc] = 0;
      this.livePassages -= 1;
      this.liveTerms -= this.lengths[doc]!;
    }
    this.deadSlots += file.to - file.from;
  }

  /** Gives the file's passages slots, and their postings to `pending` (slot, count, per term id). */
  private add(file: PostingsFile, pending: Map<number, number[]>): void {
    this.reserve(this.slots + file.rows.length);
    const from = this.slots;
    for (const row of file.rows) {
      const doc = this.slots++;
      this.ids[doc] = Number(row.id);
      this.lengths[doc] = row.termCount;
      this.alive[doc] = 1;
      this.livePassages += 1;
      this.liveTerms += row.termCount;
      for (const term of row.terms) {
        let termId = this.termIds.get(term);
        if (termId === undefined) {
          termId = this.lists.length;
          this.termIds.set(term, termId);
          this.lists.push({ docs: new Uint32Array(0), tfs: new Uint32Array(0), length: 0 });
        }
        let posts = pending.get(termId);
        if (!posts) pending.set(termId, (posts = []));
        posts.push(doc, row.repeats?.[term] ?? 1);
      }
    }
    this.files.set(file.fileId, { version: file.version, from, to: this.slots });
  }

  /** Appends `posts` (slot, count, slot, count, ...) to the list, growing it at most once. */
  private append(list: PostingList, posts: readonly number[]): void {
    const length = list.length + posts.length / 2;
    if (length > list.docs.length) {
      const capacity = Math.max(length, Math.ceil(list.docs.length * 1.5));
      list.docs = grown(list.docs, capacity);
      list.tfs = grown(list.tfs, capacity);
    }
    for (let i = 0; i < posts.length; i += 2) {
      list.docs[list.length] = posts[i]!;
      list.tfs[list.length] = posts[i + 1]!;
      list.length += 1;
    }
  }

  private reserve(slots: number): void {
    if (slots <= this.ids.length) return;
    const capacity = Math.max(slots, Math.ceil(this.ids.length * 1.5), 64);
    const ids = new Float64Array(capacity);
    ids.set(this.ids.subarray(0, this.slots));
    this.ids = ids;
    this.lengths = grown(this.lengths, capacity);
    const alive = new Uint8Array(capacity);
    alive.set(this.alive.subarray(0, this.slots));
    this.alive = alive;
  }

  /** Rewrites every list without dead slots, and numbers the live slots from 0 again. */
  private compact(): void {
    const renumbered = new Int32Array(this.slots).fill(-1);
    let next = 0;
    for (const file of [...this.files.values()].sort((a, b) => a.from - b.from)) {
      const from = next;
      for (let doc = file.from; doc < file.to; doc++) {
        renumbered[doc] = next;
        this.ids[next] = this.ids[doc]!;
        this.lengths[next] = this.lengths[doc]!;
        this.alive[next] = 1;
        next++;
      }
      file.from = from;
      file.to = next;
    }
    this.alive.fill(0, next);
    for (const list of this.lists) {
      let kept = 0;
      for (let i = 0; i < list.length; i++) {
        const doc = renumbered[list.docs[i]!]!;
        if (doc < 0) continue;
        list.docs[kept] = doc;
        list.tfs[kept] = list.tfs[i]!;
        kept++;
      }
      list.length = kept;
    }
    // Terms no live passage holds keep an empty list (and their id): cheap, and reused if they return.
    this.slots = next;
    this.deadSlots = 0;
  }
}

function grown(array: Uint32Array, capacity: number): Uint32Array<ArrayBuffer> {
  const larger = new Uint32Array(capacity);
  larger.set(array.subarray(0, Math.min(array.length, larger.length)));
  return larger;
}

/** The `limit` best of `touched` by score, then by id: a bounded heap whose root is the worst kept. */
function bestOf(touched: Uint32Array, scores: Float64Array, ids: Float64Array, limit: number): ScoredId[] {
  const heap: number[] = [];
  // a is worse than b: lower score, or the same score and a later id.
  const worse = (a: number, b: number) =>
    scores[a]! < scores[b]! || (scores[a] === scores[b] && ids[a]! > ids[b]!);
  const down = (from: number) => {
    for (let i = from; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < heap.length && worse(heap[left]!, heap[worst]!)) worst = left;
      if (right < heap.length && worse(heap[right]!, heap[worst]!)) worst = right;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  };
  for (const doc of touched) {
    if (heap.length < limit) {
      heap.push(doc);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (worse(heap[0]!, doc)) {
      heap[0] = doc;
      down(0);
    }
  }
  return heap
    .sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0))
    .map((doc) => ({ id: String(ids[doc]), score: scores[doc]! }));
}

/**
 * Users' postings, kept between searches within a memory budget, least recently used out first. A
 * user too large for the whole budget is not kept, and not read again for a while (`retryAfterMs`).
 */
export class PostingsCache {
  private readonly entries = new Map<string, UserPostings>();
  private readonly sizes = new Map<string, number>();
  private readonly tooLarge = new Map<string, number>();
  private used = 0;

  constructor(
    readonly maxBytes: number,
    private readonly retryAfterMs = 10 * 60_000,
  ) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** The user's postings if kept (now the most recently used), else undefined. */
  get(userId: string): UserPostings | undefined {
    const entry = this.entries.get(userId);
    if (entry) {
      this.entries.delete(userId);
      this.entries.set(userId, entry);
    }
    return entry;
  }

  /** Whether a load of the user is worth starting (the cache is on and they were not too large lately). */
  mayLoad(userId: string, now = Date.now()): boolean {
    const since = this.tooLarge.get(userId);
    return this.enabled && (since === undefined || now - since >= this.retryAfterMs);
  }

  /** Keeps (or re-measures) the user's postings; false if they do not fit the budget. */
  keep(userId: string, postings: UserPostings, now = Date.now()): boolean {
    this.forget(userId);
    const bytes = postings.bytes();
    if (bytes > this.maxBytes) {
      this.tooLarge.set(userId, now);
      return false;
    }
    this.tooLarge.delete(userId);
    this.entries.set(userId, postings);
    this.sizes.set(userId, bytes);
    this.used += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.used <= this.maxBytes) break;
      if (oldest !== userId) this.forget(oldest);
    }
    return true;
  }

  forget(userId: string): void {
    this.entries.delete(userId);
    this.used -= this.sizes.get(userId) ?? 0;
    this.sizes.delete(userId);
  }
}
