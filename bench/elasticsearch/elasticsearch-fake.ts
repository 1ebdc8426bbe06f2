/**
 * An in-process stand-in for an Elasticsearch cluster, for `--only elasticsearch --dry-run`: a
 * Connection class for the official client that answers the few requests the adapter and the
 * benchmark make (alias checks, index create and delete, bulk, delete by query, search, stats,
 * info, health, cat nodes and shards) from memory. The real client and the real
 * ElasticsearchSearchIndex run on top of it, so the dry run exercises their request building,
 * the benchmark's flow, its cleanup and its report; its figures mean nothing about Elasticsearch.
 *
 * Search is a plain term match (any query word, phrase boosted), filtered by `user_id`: enough for
 * the benchmark's checks (tenancy, phrases, absent words), not a model of BM25 or stemming. A kNN
 * search is exact cosine over the user's stored vectors.
 */
import {
  BaseConnection,
  type ConnectionRequestOptions,
  type ConnectionRequestOptionsAsStream,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
  type ConnectionRequestResponseAsStream,
} from "../harness/deps.ts";

interface FakeDoc {
  id: string;
  routing: string | undefined;
  source: Record<string, unknown>;
  words: Set<string>;
  text: string;
  bytes: number;
}

interface FakeIndex {
  settings: Record<string, unknown>;
  mappings: Record<string, unknown>;
  docs: Map<string, FakeDoc>;
  byUser: Map<string, Map<string, FakeDoc>>;
}

/** The cluster's state, shared by every client built on the same `fakeCluster()`. */
export interface FakeCluster {
  indices: Map<string, FakeIndex>;
  aliases: Map<string, string>;
  /**
   * Requests answered, by shape: method, path with names as `{index}`, and query parameters with
   * routing values as `*` (`POST /{index}/_bulk?refresh=wait_for&require_alias=true`).
   */
  requests: Map<string, number>;
}

type Json = Record<string, unknown>;
export interface Answer {
  status: number;
  body?: unknown;
}

const error = (status: number, type: string, reason: string): Answer => ({
  status,
  body: { error: { type, reason, root_cause: [{ type, reason }] }, status },
});

/** Names in a path segment: comma-separated, with `*` wildcards. */
function resolve(cluster: FakeCluster, segment: string): string[] {
  const names = new Set<string>();
  for (const raw of decodeURIComponent(segment).split(",")) {
    if (raw.includes("*")) {
      const pattern = new RegExp(`^${raw.split("*").map(escape).join(".*")}$`);
      for (const name of cluster.indices.keys()) if (pattern.test(name)) names.add(name);
    } else if (cluster.indices.has(raw)) names.add(raw);
    else {
      const target = cluster.aliases.get(raw);
      if (target !== undefined) names.add(target);
    }
  }
  return [...names];
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function termValue(filters: Json[], field: string): unknown {
  for (const f of filters) {
    const term = f.term as Json | undefined;
    if (term && field in term) return term[field];
  }
  return undefined;
}

/** The fake cluster's answer to one request (exported to serve it over HTTP when checking the script). */
export function answerRequest(
  cluster: FakeCluster,
  method: string,
  path: string,
  query: URLSearchParams,
  body: string,
): Answer {
  const parts = path.split("/").filter((p) => p.length > 0);
  const json = (): Json => (body ? (JSON.parse(body) as Json) : {});

  if (parts.length === 0 && method === "GET") {
    return {
      status: 200,
      body: {
        name: "dry-run-node",
        cluster_name: "dry-run",
        cluster_uuid: "dry-run",
        version: { number: "0.0.0-dry-run", build_flavor: "dry-run", lucene_version: "0.0.0" },
        tagline: "You Know, for Search",
      },
    };
  }
  if (parts[0] === "_cluster" && parts[1] === "health") {
    return {
      status: 200,
      body: { cluster_name: "dry-run", status: "green", number_of_nodes: 1, number_of_data_nodes: 1 },
    };
  }
  if (parts[0] === "_nodes" && parts[1] === "stats") {
    return {
      status: 200,
      body: {
        nodes: {
          dry: { name: "dry-run-node", jvm: { mem: { heap_used_in_bytes: 0, heap_max_in_bytes: 0 } } },
        },
      },
    };
  }
  if (parts[0] === "_cat" && parts[1] === "nodes") {
    return {
      status: 200,
      body: [{ name: "dry-run-node", "node.role": "dimrs", "heap.max": "1gb", "ram.max": "2gb", cpu: "1" }],
    };
  }
  if (parts[0] === "_cat" && parts[1] === "shards") {
    const names = parts[2] ? resolve(cluster, parts[2]) : [...cluster.indices.keys()];
    return {
      status: 200,
      body: names.map((index) => ({
        index,
        shard: "0",
        prirep: "p",
        state: "STARTED",
        node: "dry-run-node",
      })),
    };
  }
  if (parts[0] === "_alias" && parts[1] && method === "HEAD") {
    return { status: cluster.aliases.has(decodeURIComponent(parts[1])) ? 200 : 404 };
  }

  const target = parts[0] ? decodeURIComponent(parts[0]) : "";
  const action = parts[1];

  if (action === undefined) {
    if (method === "PUT") {
      if (cluster.indices.has(target) || cluster.aliases.has(target))
        return error(400, "resource_already_exists_exception", `index [${target}] already exists`);
      const request = json();
      cluster.indices.set(target, {
        settings: (request.settings as Json | undefined) ?? {},
        mappings: (request.mappings as Json | undefined) ?? {},
        docs: new Map(),
        byUser: new Map(),
      });
      for (const alias of Object.keys((request.aliases as Json | undefined) ?? {}))
        cluster.aliases.set(alias, target);
      return { status: 200, body: { acknowledged: true, shards_acknowledged: true, index: target } };
    }
    const names = resolve(cluster, parts[0]!);
    if (method === "HEAD") return { status: names.length > 0 ? 200 : 404 };
    if (method === "GET") {
      if (names.length === 0 && query.get("allow_no_indices") !== "true" && !target.includes("*"))
        return error(404, "index_not_found_exception", `no such index [${target}]`);
      const out: Json = {};
      for (const name of names) {
        const aliases: Json = {};
        for (const [alias, index] of cluster.aliases) if (index === name) aliases[alias] = {};
        const index = cluster.indices.get(name)!;
        out[name] = { aliases, mappings: index.mappings, settings: { index: index.settings } };
      }
      return { status: 200, body: out };
    }
    if (method === "DELETE") {
      // Like a cluster with action.destructive_requires_name (the 8.x default): names only.
      if (target.includes("*"))
        return error(
          400,
          "illegal_argument_exception",
          "Wildcard expressions or all indices are not allowed",
        );
      if (names.length === 0) return error(404, "index_not_found_exception", `no such index [${target}]`);
      for (const name of names) {
        cluster.indices.delete(name);
        for (const [alias, index] of [...cluster.aliases]) if (index === name) cluster.aliases.delete(alias);
      }
      return { status: 200, body: { acknowledged: true } };
    }
  }

  const names = resolve(cluster, parts[0]!);
  const index = names.length === 1 ? cluster.indices.get(names[0]!) : undefined;
  if (!index) return error(404, "index_not_found_exception", `no such index [${target}]`);

  switch (action) {
    case "_bulk": {
      if (query.get("require_alias") === "true" && !cluster.aliases.has(target))
        return error(
          404,
          "index_not_found_exception",
          `no such index [${target}] and [require_alias] request flag is [true]`,
        );
      const lines = body.split("\n").filter((l) => l.length > 0);
      const items: Json[] = [];
      for (let i = 0; i + 1 < lines.length; i += 2) {
        const op = (JSON.parse(lines[i]!) as { index: { _id: string; routing?: string } }).index;
        const source = JSON.parse(lines[i + 1]!) as Json;
        const text = typeof source.words === "string" ? source.words : "";
        const doc: FakeDoc = {
          id: op._id,
          routing: op.routing,
          source,
          words: new Set(text.split(" ")),
          text: ` ${text} `,
          bytes: Buffer.byteLength(lines[i + 1]!),
        };
        const existed = index.docs.has(op._id);
        index.docs.set(op._id, doc);
        const user = String(source.user_id);
        let own = index.byUser.get(user);
        if (!own) index.byUser.set(user, (own = new Map()));
        own.set(op._id, doc);
        items.push({
          index: { _id: op._id, status: existed ? 200 : 201, result: existed ? "updated" : "created" },
        });
      }
      return { status: 200, body: { took: 0, errors: false, items } };
    }
    case "_delete_by_query": {
      const filters = (((json().query as Json).bool as Json).filter as Json[] | undefined) ?? [];
      const user = termValue(filters, "user_id");
      const file = termValue(filters, "file_id");
      const range = filters.find((f) => f.range) as { range: { ord: { gte: number } } } | undefined;
      let deleted = 0;
      const own = index.byUser.get(String(user));
      for (const doc of own ? [...own.values()] : []) {
        if (doc.source.file_id !== file) continue;
        if (range && (doc.source.ord as number) < range.range.ord.gte) continue;
        index.docs.delete(doc.id);
        own!.delete(doc.id);
        deleted += 1;
      }
      return { status: 200, body: { took: 0, deleted, failures: [] } };
    }
    case "_search": {
      const request = json();
      if (request.knn) return knnSearch(index, names[0]!, request);
      const bool = (request.query as Json).bool as { filter: Json[]; should: Json[] };
      const user = String(termValue(bool.filter, "user_id"));
      const match = (bool.should[0]!.match as { words: { query: string } }).words.query;
      const terms = match.split(" ");
      const phrase = ` ${match} `;
      const hits: { doc: FakeDoc; score: number }[] = [];
      for (const doc of index.byUser.get(user)?.values() ?? []) {
        let score = 0;
        for (const t of terms) if (doc.words.has(t)) score += 1;
        if (score === 0) continue;
        if (terms.length > 1 && doc.text.includes(phrase)) score += 2;
        hits.push({ doc, score });
      }
      const fields = (request._source as string[] | undefined) ?? Object.keys(hits[0]?.doc.source ?? {});
      return hitsAnswer(names[0]!, hits, Number(request.size ?? 10), fields);
    }
    case "_refresh":
      return { status: 200, body: { _shards: { total: 1, successful: 1, failed: 0 } } };
    case "_settings":
      return {
        status: 200,
        body: Object.fromEntries(
          names.map((n) => [
            n,
            {
              settings: {
                index: {
                  // What create asked for, as strings like Elasticsearch's; the fake has one node, one shard.
                  number_of_shards: "1",
                  number_of_replicas: "0",
                  ...Object.fromEntries(
                    Object.entries((cluster.indices.get(n)!.settings.index as Json | undefined) ?? {}).map(
                      ([k, v]) => [k, String(v)],
                    ),
                  ),
                },
              },
            },
          ]),
        ),
      };
    case "_stats": {
      const stats = (n: string) => {
        const docs = cluster.indices.get(n)!.docs;
        let bytes = 0;
        for (const d of docs.values()) bytes += d.bytes;
        return { docs: { count: docs.size, deleted: 0 }, store: { size_in_bytes: bytes } };
      };
      const all = names.map(stats);
      const sum = {
        docs: { count: all.reduce((s, x) => s + x.docs.count, 0), deleted: 0 },
        store: { size_in_bytes: all.reduce((s, x) => s + x.store.size_in_bytes, 0) },
      };
      return {
        status: 200,
        body: {
          _all: { primaries: sum, total: sum },
          indices: Object.fromEntries(names.map((n, i) => [n, { primaries: all[i], total: all[i] }])),
        },
      };
    }
    default:
      return error(400, "dry_run_unsupported", `the dry-run cluster does not answer ${method} ${path}`);
  }
}

/** A fresh, empty fake cluster. */
export function fakeCluster(): FakeCluster {
  return { indices: new Map(), aliases: new Map(), requests: new Map() };
}

/** A Connection class (the client's `Connection` option) answering from `cluster`. */
export function fakeConnection(cluster: FakeCluster): typeof BaseConnection {
  return class FakeConnection extends BaseConnection {
    override request(
      params: ConnectionRequestParams,
      options: ConnectionRequestOptions,
    ): Promise<ConnectionRequestResponse>;
    override request(
      params: ConnectionRequestParams,
      options: ConnectionRequestOptionsAsStream,
    ): Promise<ConnectionRequestResponseAsStream>;
    override async request(
      params: ConnectionRequestParams,
      _options: ConnectionRequestOptions | ConnectionRequestOptionsAsStream,
    ): Promise<ConnectionRequestResponse | ConnectionRequestResponseAsStream> {
      await new Promise((resolve) => setImmediate(resolve)); // answer asynchronously, as a socket would
      const body =
        typeof params.body === "string"
          ? params.body
          : Buffer.isBuffer(params.body)
            ? params.body.toString("utf8")
            : "";
      const shape = `${params.method} /${params.path
        .split("/")
        .filter((p) => p)
        .map((p) => (decodeURIComponent(p).startsWith("locus-bench-") ? "{index}" : p))
        .join("/")}`;
      const query = [...new URLSearchParams(params.querystring ?? "")]
        .map(([k, v]) => `${k}=${k === "routing" ? "*" : v}`)
        .sort()
        .join("&");
      const key = query ? `${shape}?${query}` : shape;
      cluster.requests.set(key, (cluster.requests.get(key) ?? 0) + 1);
      const answer = answerRequest(
        cluster,
        params.method,
        params.path,
        new URLSearchParams(params.querystring ?? ""),
        body,
      );
      return {
        statusCode: answer.status,
        headers: { "content-type": "application/json", "x-elastic-product": "Elasticsearch" },
        body: answer.body === undefined ? "" : JSON.stringify(answer.body),
      };
    }
  };
}

/** `knn` in a search: the user's `k` nearest by exact cosine, scored as Elasticsearch scores cosine, (1 + cos) / 2. */
function knnSearch(index: FakeIndex, name: string, request: Json): Answer {
  const knn = request.knn as { field: string; query_vector: number[]; k: number; filter: Json[] };
  const user = String(termValue(knn.filter, "user_id"));
  const q = knn.query_vector;
  const norm = (v: number[]) => Math.sqrt(v.reduce((n, x) => n + x * x, 0));
  const hits: { doc: FakeDoc; score: number }[] = [];
  for (const doc of index.byUser.get(user)?.values() ?? []) {
    const v = doc.source[knn.field] as number[] | undefined;
    if (!v || v.length !== q.length) continue;
    const dot = v.reduce((n, x, i) => n + x * q[i]!, 0);
    hits.push({ doc, score: (1 + dot / (norm(v) * norm(q))) / 2 });
  }
  return hitsAnswer(name, hits, knn.k, (request._source as string[] | undefined) ?? []);
}

/** A search's answer: the best `size` hits, each with the `_source` fields asked for. */
function hitsAnswer(
  index: string,
  hits: { doc: FakeDoc; score: number }[],
  size: number,
  fields: string[],
): Answer {
  hits.sort((a, b) => b.score - a.score);
  return {
    status: 200,
    body: {
      took: 0,
      timed_out: false,
      hits: {
        max_score: hits[0]?.score ?? null,
        hits: hits.slice(0, size).map(({ doc, score }) => ({
          _index: index,
          _id: doc.id,
          _score: score,
          _source: Object.fromEntries(fields.map((f) => [f, doc.source[f]])),
        })),
      },
    },
  };
}
