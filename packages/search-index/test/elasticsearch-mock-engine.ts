// An in-memory stand-in for an Elasticsearch cluster, behind the vendor's mock (no cluster runs on
// this machine): indexes and aliases, documents written by bulk requests (checked against the
// strict mapping) and deleted by query, and searches evaluated as Elasticsearch evaluates the
// clauses the adapter uses: bool (filter, must, should, must_not, minimum_should_match), term,
// terms, range (numbers and dates; gt, gte, lt, lte), exists and match, on keyword, date,
// flattened (`metadata.<key>`) and whitespace-analysed text fields; and kNN with its filter
// applied before the `k` nearest are taken. A clause it does not implement is refused with a 400
// rather than ignored, so a test can never pass on a condition the engine skipped.
//
// Scores: BM25 with Lucene's idf over the index's documents (one shard: every user's), and cosine
// kNN scored (1 + cos) / 2, as Elasticsearch does. One shard, refreshed at once: what a search
// sees is what was written.

import { BM25_B, BM25_K1 } from "../src/bm25.ts";
import type { Sent } from "./elasticsearch-mock-cluster.ts";

type Source = Record<string, unknown>;
type Query = Record<string, unknown>;
interface Doc {
  id: string;
  routing: string;
  source: Source;
}
interface Index {
  mappings: {
    _routing?: { required?: boolean };
    properties: Record<string, { type?: string; dims?: number }>;
  };
  docs: Map<string, Doc>;
}

/** An error response as the cluster would send it (mockCluster turns it into the client's ResponseError). */
export class EngineError extends Error {
  constructor(
    readonly statusCode: number,
    readonly type: string,
    readonly reason: string,
  ) {
    super(`${statusCode} ${type}: ${reason}`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The single key of a clause object (`{ term: {...} }` → ["term", {...}]). */
function only(clause: unknown, what: string): [string, unknown] {
  if (!isObject(clause) || Object.keys(clause).length !== 1) {
    throw engineError(400, "parsing_exception", `${what} must be an object with one key`);
  }
  return Object.entries(clause)[0]!;
}

const engineError = (statusCode: number, type: string, reason: string): EngineError =>
  new EngineError(statusCode, type, reason);

export class MockEngine {
  private readonly indices = new Map<string, Index>();
  private readonly aliases = new Map<string, Set<string>>();

  /** The response to a request, an EngineError, or undefined for requests it does not serve. */
  respond(req: Sent): unknown {
    try {
      return this.handle(req);
    } catch (err) {
      if (err instanceof EngineError) return err;
      throw err;
    }
  }

  /** Documents of an index or alias (a test's way to look inside). */
  documents(target: string): Source[] {
    return this.resolve(target).flatMap((name) =>
      [...this.indices.get(name)!.docs.values()].map((d) => d.source),
    );
  }

  private handle(req: Sent): unknown {
    const { method, path } = req;
    const parts = path.split("/").filter(Boolean);
    if (parts[0] === "_alias" && parts.length === 2) {
      const names = this.aliases.get(parts[1]!);
      if (!names || names.size === 0) throw engineError(404, "aliases_not_found_exception", "alias missing");
      if (method === "HEAD") return "";
      return Object.fromEntries([...names].map((name) => [name, { aliases: { [parts[1]!]: {} } }]));
    }
    if (method === "POST" && path === "/_aliases") {
      const { actions } = req.body as { actions: Array<Record<string, { index: string; alias: string }>> };
      for (const action of actions) {
        const [kind, { index, alias }] = only(action, "alias action") as [
          string,
          { index: string; alias: string },
        ];
        if (!this.indices.has(index)) throw engineError(404, "index_not_found_exception", index);
        const set = this.aliases.get(alias) ?? new Set<string>();
        if (kind === "add") set.add(index);
        else if (kind === "remove") set.delete(index);
        else throw engineError(400, "parsing_exception", `alias action ${kind}`);
        this.aliases.set(alias, set);
      }
      return { acknowledged: true };
    }
    if (parts.length === 1 && !parts[0]!.startsWith("_")) {
      const name = parts[0]!;
      if (method === "PUT") return this.create(name, req.body as Record<string, unknown>);
      if (method === "DELETE") {
        for (const index of name.split(",")) {
          if (!this.indices.delete(index)) throw engineError(404, "index_not_found_exception", index);
          for (const set of this.aliases.values()) set.delete(index);
        }
        return { acknowledged: true };
      }
      return undefined;
    }
    if (parts.length !== 2) return undefined;
    const [target, action] = parts as [string, string];
    if (action === "_settings" || action === "_refresh") {
      this.resolve(target);
      return action === "_refresh"
        ? { _shards: { total: 1, successful: 1, failed: 0 } }
        : { acknowledged: true };
    }
    if (method === "POST" && action === "_bulk") return this.bulk(target, req);
    if (method === "POST" && action === "_delete_by_query")
      return this.deleteByQuery(target, req.body as Query);
    if (method === "POST" && action === "_search") return this.search(target, req.body as Query);
    return undefined;
  }

  private create(name: string, body: Record<string, unknown>): unknown {
    if (this.indices.has(name) || this.aliases.has(name)) {
      throw engineError(400, "resource_already_exists_exception", `index [${name}] already exists`);
    }
    this.indices.set(name, { mappings: body.mappings as Index["mappings"], docs: new Map() });
    for (const alias of Object.keys((body.aliases as Record<string, unknown> | undefined) ?? {})) {
      this.aliases.set(alias, new Set([...(this.aliases.get(alias) ?? []), name]));
    }
    return { acknowledged: true, shards_acknowledged: true, index: name };
  }

  /** The physical indexes a name means (an alias's, or the index itself). */
  private resolve(target: string, requireAlias = false): string[] {
    const names = this.aliases.get(target);
    if (names && names.size > 0) return [...names];
    if (requireAlias) throw engineError(404, "index_not_found_exception", `no such alias [${target}]`);
    if (!this.indices.has(target))
      throw engineError(404, "index_not_found_exception", `no such index [${target}]`);
    return [target];
  }

  private bulk(target: string, req: Sent): unknown {
    const names = this.resolve(target, req.querystring.require_alias === "true");
    if (names.length !== 1)
      throw engineError(400, "illegal_argument_exception", "alias has more than one write index");
    const index = this.indices.get(names[0]!)!;
    const lines = req.body as unknown[];
    const items: unknown[] = [];
    /** One item of the response: what was done to a document, and how it went. */
    const item = (kind: "index" | "delete", id: string, outcome: Record<string, unknown>) =>
      items.push({ [kind]: { _index: names[0], _id: id, ...outcome } });
    for (let i = 0; i < lines.length; i += 2) {
      // A delete is one line (no document follows it).
      const remove = (lines[i] as { delete?: { _id: string } }).delete;
      if (remove) {
        const existed = index.docs.delete(remove._id);
        item(
          "delete",
          remove._id,
          existed ? { status: 200, result: "deleted" } : { status: 404, result: "not_found" },
        );
        i -= 1;
        continue;
      }
      const { index: action } = lines[i] as { index: { _id: string; routing?: string } };
      const source = lines[i + 1] as Source;
      const rejected = this.rejection(index, source);
      if (rejected) {
        item("index", action._id, { status: 400, error: rejected });
        continue;
      }
      if (index.mappings._routing?.required && action.routing === undefined) {
        item("index", action._id, {
          status: 400,
          error: { type: "routing_missing_exception", reason: "routing is required" },
        });
        continue;
      }
      const existed = index.docs.has(action._id);
      index.docs.set(action._id, { id: action._id, routing: action.routing ?? "", source });
      item(
        "index",
        action._id,
        existed ? { status: 200, result: "updated" } : { status: 201, result: "created" },
      );
    }
    const errors = items.some((item) => (item as { index?: { error?: unknown } }).index?.error !== undefined);
    return { took: 1, errors, items };
  }

  /** Why a strict mapping rejects the document, if it does (a field it does not map, or a vector of other dimensions). */
  private rejection(index: Index, source: Source): { type: string; reason: string } | undefined {
    const properties = index.mappings.properties;
    for (const [field, value] of Object.entries(source)) {
      const mapping = properties[field];
      if (!mapping) {
        return {
          type: "strict_dynamic_mapping_exception",
          reason: `mapping set to strict, dynamic introduction of [${field}] within [_doc] is not allowed`,
        };
      }
      if (
        mapping.type === "dense_vector" &&
        mapping.dims !== undefined &&
        (value as unknown[]).length !== mapping.dims
      ) {
        // Elasticsearch 8's words for it.
        return {
          type: "document_parsing_exception",
          reason: `The [dense_vector] field [${field}] in doc [document with id 'x'] has a different number of dimensions [${(value as unknown[]).length}] than defined in the mapping [${mapping.dims}]`,
        };
      }
      if (mapping.type === "date" && Number.isNaN(Date.parse(String(value)))) {
        return { type: "mapper_parsing_exception", reason: `failed to parse date field [${String(value)}]` };
      }
    }
    return undefined;
  }

  private deleteByQuery(target: string, body: Query): unknown {
    let deleted = 0;
    for (const name of this.resolve(target)) {
      const index = this.indices.get(name)!;
      for (const [id, doc] of [...index.docs]) {
        if (this.matches(index, body.query, doc.source)) {
          index.docs.delete(id);
          deleted += 1;
        }
      }
    }
    return { took: 1, timed_out: false, total: deleted, deleted, failures: [] };
  }

  private search(target: string, body: Query): unknown {
    const known = new Set(["size", "track_total_hits", "_source", "query", "knn"]);
    for (const key of Object.keys(body)) {
      if (!known.has(key)) throw engineError(400, "parsing_exception", `unknown search key [${key}]`);
    }
    const size = typeof body.size === "number" ? body.size : 10;
    const hits: Array<{ index: string; doc: Doc; score: number; order: number }> = [];
    let order = 0;
    for (const name of this.resolve(target)) {
      const index = this.indices.get(name)!;
      const docs = [...index.docs.values()];
      if (body.knn !== undefined) {
        hits.push(
          ...this.knn(index, docs, body.knn as Query).map((h) => ({ ...h, index: name, order: order++ })),
        );
      } else {
        const stats = this.statistics(docs);
        for (const doc of docs) {
          if (!this.matches(index, body.query ?? { match_all: {} }, doc.source)) continue;
          hits.push({
            index: name,
            doc,
            score: this.score(body.query as Query, doc.source, stats),
            order: order++,
          });
        }
      }
    }
    hits.sort((a, b) => b.score - a.score || a.order - b.order);
    const fields = Array.isArray(body._source) ? (body._source as string[]) : undefined;
    return {
      took: 1,
      timed_out: false,
      hits: {
        hits: hits.slice(0, size).map((h) => ({
          _index: h.index,
          _id: h.doc.id,
          _score: h.score,
          ...(body._source === false
            ? {}
            : {
                _source: fields
                  ? Object.fromEntries(
                      fields.filter((f) => f in h.doc.source).map((f) => [f, h.doc.source[f]]),
                    )
                  : h.doc.source,
              }),
        })),
      },
    };
  }

  /** The `k` nearest documents (cosine) among those that pass the kNN filter. */
  private knn(index: Index, docs: Doc[], knn: Query): Array<{ doc: Doc; score: number }> {
    const {
      field,
      query_vector: vector,
      k,
      num_candidates: candidates,
      filter,
      rescore_vector: rescore,
    } = knn as {
      field: string;
      query_vector: number[];
      k: number;
      num_candidates: number;
      filter?: unknown[];
      rescore_vector?: { oversample?: unknown };
    };
    if (!(k >= 1) || !(candidates >= k) || candidates > 10_000) {
      throw engineError(400, "illegal_argument_exception", "k must be at least 1 and at most num_candidates");
    }
    // The engine's cosines are exact already, as a rescore makes Elasticsearch's: only the
    // oversample's range (Elasticsearch 8.18+: 1 to 10, or 0 for none) is checked.
    if (rescore !== undefined) {
      const oversample = rescore.oversample;
      if (typeof oversample !== "number" || !(oversample === 0 || (oversample >= 1 && oversample <= 10))) {
        throw engineError(
          400,
          "illegal_argument_exception",
          "[oversample] must be between [1.0] and [10.0] or 0",
        );
      }
    }
    if (index.mappings.properties[field]?.type !== "dense_vector") {
      throw engineError(400, "illegal_argument_exception", `[${field}] is not a dense_vector field`);
    }
    const norm = (v: number[]) => Math.hypot(...v);
    const scored: Array<{ doc: Doc; score: number }> = [];
    for (const doc of docs) {
      const stored = doc.source[field] as number[] | undefined;
      if (!stored || stored.length !== vector.length) continue;
      if (filter && !filter.every((clause) => this.matches(index, clause, doc.source))) continue;
      let dot = 0;
      for (let i = 0; i < vector.length; i++) dot += vector[i]! * stored[i]!;
      scored.push({ doc, score: (1 + dot / (norm(vector) * norm(stored))) / 2 });
    }
    return scored.sort((a, b) => b.score - a.score).slice(0, k);
  }

  /** Whether the document matches the query (scores aside). */
  private matches(index: Index, query: unknown, source: Source): boolean {
    const [type, spec] = only(query, "query");
    switch (type) {
      case "match_all":
        return true;
      case "bool": {
        const bool = spec as Record<string, unknown>;
        const list = (key: string) => {
          const value = bool[key];
          return value === undefined ? [] : Array.isArray(value) ? (value as unknown[]) : [value];
        };
        for (const key of Object.keys(bool)) {
          if (!["filter", "must", "should", "must_not", "minimum_should_match"].includes(key)) {
            throw engineError(400, "parsing_exception", `[bool] unknown key [${key}]`);
          }
        }
        if (![...list("filter"), ...list("must")].every((q) => this.matches(index, q, source))) return false;
        if (list("must_not").some((q) => this.matches(index, q, source))) return false;
        const should = list("should");
        const minimum =
          typeof bool.minimum_should_match === "number"
            ? bool.minimum_should_match
            : list("filter").length + list("must").length > 0
              ? 0
              : Math.min(1, should.length);
        return should.filter((q) => this.matches(index, q, source)).length >= minimum;
      }
      case "term": {
        const [field, value] = only(spec, "term");
        const wanted = isObject(value) ? value.value : value;
        return this.values(index, source, field).some((v) => String(v) === String(wanted));
      }
      case "terms": {
        const [field, wanted] = only(spec, "terms");
        if (!Array.isArray(wanted)) throw engineError(400, "parsing_exception", "[terms] needs an array");
        const set = new Set(wanted.map(String));
        return this.values(index, source, field).some((v) => set.has(String(v)));
      }
      case "exists": {
        const { field } = spec as { field: string };
        return this.values(index, source, field).length > 0;
      }
      case "range": {
        const [field, bounds] = only(spec, "range") as [string, Record<string, unknown>];
        const date = index.mappings.properties[field]?.type === "date";
        const number = (v: unknown) => (date ? Date.parse(String(v)) : Number(v));
        for (const key of Object.keys(bounds)) {
          if (!["gt", "gte", "lt", "lte"].includes(key))
            throw engineError(400, "parsing_exception", `[range] ${key}`);
        }
        return this.values(index, source, field).some((raw) => {
          const v = number(raw);
          return (
            !Number.isNaN(v) &&
            (bounds.gt === undefined || v > number(bounds.gt)) &&
            (bounds.gte === undefined || v >= number(bounds.gte)) &&
            (bounds.lt === undefined || v < number(bounds.lt)) &&
            (bounds.lte === undefined || v <= number(bounds.lte))
          );
        });
      }
      case "match": {
        const [field, value] = only(spec, "match");
        const { query: text, operator } = (isObject(value) ? value : { query: value }) as {
          query: string;
          operator?: string;
        };
        if (operator !== undefined && operator !== "or")
          throw engineError(400, "parsing_exception", "operator");
        const wanted = new Set(String(text).split(/\s+/).filter(Boolean));
        return this.values(index, source, field).some((v) =>
          String(v)
            .split(/\s+/)
            .some((t) => wanted.has(t)),
        );
      }
      default:
        throw engineError(400, "parsing_exception", `unknown query [${type}]`);
    }
  }

  /**
   * A field's values as the index holds them: arrays spread, missing as none; `metadata.<key>` is
   * the flattened field's leaf under that key. A field the mapping does not know has no values.
   */
  private values(index: Index, source: Source, field: string): unknown[] {
    const [top, ...rest] = field.split(".");
    const mapping = index.mappings.properties[top!];
    if (!mapping) return [];
    let value: unknown = source[top!];
    if (rest.length > 0) {
      if (mapping.type !== "flattened" && mapping.type !== "object" && mapping.type !== undefined) return [];
      for (const key of rest) value = isObject(value) ? value[key] : undefined;
    } else if (mapping.type === "flattened") {
      // The flattened field's root matches any of its leaves.
      value = isObject(value) ? Object.values(value).flat() : value;
    }
    if (value === undefined || value === null) return [];
    return (Array.isArray(value) ? value : [value]).filter((v) => v !== null && !isObject(v));
  }

  /** What BM25 needs of the index: its documents' lengths and how many hold each term (of `words`). */
  private statistics(docs: Doc[]): { count: number; avgLength: number; withTerm: Map<string, number> } {
    const withTerm = new Map<string, number>();
    let total = 0;
    let count = 0;
    for (const doc of docs) {
      if (typeof doc.source.words !== "string") continue;
      const terms = doc.source.words.split(/\s+/).filter(Boolean);
      count += 1;
      total += terms.length;
      for (const t of new Set(terms)) withTerm.set(t, (withTerm.get(t) ?? 0) + 1);
    }
    return { count, avgLength: count > 0 ? total / count : 0, withTerm };
  }

  /** The BM25 score of the query's `match` clauses (Lucene's formula); filters score nothing. */
  private score(
    query: Query | undefined,
    source: Source,
    stats: ReturnType<MockEngine["statistics"]>,
  ): number {
    if (!query) return 1;
    const [type, spec] = only(query, "query");
    if (type === "bool") {
      const bool = spec as Record<string, unknown[] | undefined>;
      return [...(bool.must ?? []), ...(bool.should ?? [])].reduce<number>(
        (sum, q) => sum + this.score(q as Query, source, stats),
        0,
      );
    }
    if (type !== "match") return 0;
    const [, value] = only(spec, "match");
    const text = String(isObject(value) ? value.query : value);
    const terms = typeof source.words === "string" ? source.words.split(/\s+/).filter(Boolean) : [];
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * terms.length) / (stats.avgLength || 1));
    let score = 0;
    for (const term of new Set(text.split(/\s+/).filter(Boolean))) {
      const tf = terms.filter((t) => t === term).length;
      if (tf === 0) continue;
      const n = stats.withTerm.get(term) ?? 0;
      score += Math.log(1 + (stats.count - n + 0.5) / (n + 0.5)) * (tf / (tf + norm));
    }
    return score;
  }
}
