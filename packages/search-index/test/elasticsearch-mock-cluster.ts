// The vendor's mock of Elasticsearch, shared by the suites that check what the adapter sends,
// exactly, and how it handles what comes back; and what those suites expect to see.
import { Client, type BaseConnection, errors, type ClientOptions } from "@elastic/elasticsearch";
import MockModule from "@elastic/elasticsearch-mock";
import type { ExtractedPassage } from "@locus/contracts";
import {
  ELASTICSEARCH_MAPPING_VERSION,
  ElasticsearchSearchIndex,
  type ElasticsearchSearchIndexOptions,
} from "../src/elasticsearch-search-index.ts";
import { KNN_RESCORE_OVERSAMPLE } from "../src/elasticsearch-queries.ts";
import type { FileRef, IndexedPassage, PassageVectors, VectorQuery } from "../src/search-index.ts";
import { EngineError, MockEngine } from "./elasticsearch-mock-engine.ts";

// The mock's typings declare an ES default export on a CommonJS module; at run time the default
// import is the class itself.
const Mock = MockModule as unknown as typeof MockModule.default;
type Mock = InstanceType<typeof Mock>;

/** Yields each item on its own turn, like a stream read from storage. */
export async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) {
    await Promise.resolve();
    yield item;
  }
}

export interface Sent {
  method: string;
  path: string;
  querystring: Record<string, string>;
  body: unknown;
}

export interface BulkAction {
  index: { _id: string; routing: string };
}

export interface SearchBody {
  size: number;
  query: { bool: { should: Array<Record<string, unknown>> } };
}

export interface CreateBody {
  aliases?: Record<string, unknown>;
  settings: Record<string, unknown>;
  mappings: { _source?: unknown; properties: Record<string, unknown> };
}

/** The action lines of a bulk request (every other line; documents in between). */
export const actionsOf = (req: Sent) => (req.body as unknown[]).filter((_, i) => i % 2 === 0) as BulkAction[];
export const searchOf = (req: Sent) => req.body as SearchBody;

export const ALIAS = "locus-passages";
export const V1 = `${ALIAS}-v${ELASTICSEARCH_MAPPING_VERSION}`;

/** The mock's connection has no close(), which Client.close() calls. */
export function closable(mock: Mock): typeof BaseConnection {
  return class extends mock.getConnection() {
    override close(): Promise<void> {
      return Promise.resolve();
    }
  };
}

export const responseError = (statusCode: number, type: string, reason: string) =>
  new errors.ResponseError({
    body: { error: { type, reason }, status: statusCode },
    statusCode,
    headers: {},
    warnings: null,
    meta: {} as ConstructorParameters<typeof errors.ResponseError>[0]["meta"],
  });

/**
 * What a cluster answers for a path no installed module serves (`_delete_by_query` without the
 * `reindex` module, as the Elasticsearch of Maven Central says it): the error is a sentence.
 */
export const noHandler = (req: Sent) =>
  new errors.ResponseError({
    body: { error: `no handler found for uri [${req.path}] and method [${req.method}]` },
    statusCode: 400,
    headers: {},
    warnings: null,
    meta: {} as ConstructorParameters<typeof errors.ResponseError>[0]["meta"],
  });

/** A minimal cluster: the alias exists (unless told otherwise) and every write succeeds. */
export function defaultResponse(req: Sent, state: { aliasExists: boolean }): unknown {
  const { method, path } = req;
  if (method === "HEAD" && path.startsWith("/_alias/")) {
    return state.aliasExists ? "" : responseError(404, "aliases_not_found_exception", "missing");
  }
  if (method === "GET" && path.startsWith("/_alias/")) return { [V1]: { aliases: { [ALIAS]: {} } } };
  if (method === "PUT" && /^\/[^/_][^/]*$/.test(path)) {
    if (path === `/${V1}`) state.aliasExists = true;
    return { acknowledged: true, shards_acknowledged: true, index: path.slice(1) };
  }
  if (method === "POST" && path.endsWith("/_bulk")) {
    const actions = actionsOf(req);
    return {
      took: 1,
      errors: false,
      items: actions.map((a) => ({
        index: { _index: V1, _id: a.index._id, status: 201, result: "created" },
      })),
    };
  }
  if (method === "POST" && path.endsWith("/_delete_by_query")) {
    return { took: 1, timed_out: false, total: 0, deleted: 0, failures: [] };
  }
  if (method === "POST" && path.endsWith("/_search")) {
    return { took: 1, timed_out: false, hits: { hits: [] } };
  }
  return { acknowledged: true };
}

/**
 * The vendor's mock with a recorder of every request. By default it answers as a minimal cluster
 * (defaultResponse: writes succeed, searches find nothing); with `engine`, an in-memory engine
 * (MockEngine) keeps indexes, aliases and documents and evaluates searches as Elasticsearch does.
 */
export function mockCluster(options: { aliasExists?: boolean; engine?: boolean } = {}) {
  const mock = new Mock();
  const sent: Sent[] = [];
  const state = { aliasExists: options.aliasExists ?? true };
  const engine = options.engine ? new MockEngine() : undefined;
  const overrides: Array<(req: Sent) => unknown> = [];
  for (const method of ["GET", "HEAD", "POST", "PUT", "DELETE"]) {
    mock.add({ method, path: "*" }, (params) => {
      const req: Sent = {
        method: params.method as string,
        path: params.path as string,
        querystring: { ...params.querystring },
        body: params.body ?? null,
      };
      sent.push(req);
      for (const override of overrides) {
        const response = override(req);
        if (response !== undefined) return response as Record<string, unknown>;
      }
      if (engine) {
        const response = engine.respond(req);
        if (response === undefined) return responseError(400, "unsupported", `${req.method} ${req.path}`);
        if (response instanceof EngineError) {
          return responseError(response.statusCode, response.type, response.reason);
        }
        return response as Record<string, unknown>;
      }
      return defaultResponse(req, state) as Record<string, unknown>;
    });
  }
  const client = (extra: Partial<ClientOptions> = {}) =>
    new Client({ node: "http://localhost:9200", Connection: closable(mock), ...extra });
  return {
    mock,
    sent,
    state,
    engine,
    client,
    /** A response for requests this returns something for; undefined falls through. */
    on(override: (req: Sent) => unknown) {
      overrides.push(override);
    },
    open(opts: Partial<ElasticsearchSearchIndexOptions> = {}) {
      return new ElasticsearchSearchIndex({ client: client(), bulkRetryDelayMs: 1, ...opts });
    },
    /** Requests after the alias check: what a call itself sent. */
    calls: () => sent.filter((r) => !(r.method === "HEAD" && r.path === `/_alias/${ALIAS}`)),
  };
}

/** No analysis of the index's own: terms arrive made (`indexTerms`), and are only split on spaces. */
/** BM25 with the parameters of every backend (FTS5's: k1 1.2, b 0.75), said in the index's settings. */
export const EXPECTED_SIMILARITY = { default: { type: "BM25", k1: 1.2, b: 0.75 } };
export const EXPECTED_SETTINGS = { index: { similarity: EXPECTED_SIMILARITY } };

export const EXPECTED_MAPPINGS = {
  dynamic: "strict",
  _routing: { required: true },
  _source: { excludes: ["local_vector", "remote_vector"] },
  properties: {
    user_id: { type: "keyword" },
    file_id: { type: "keyword" },
    ord: { type: "integer" },
    content: { type: "text", index: false },
    words: { type: "text", analyzer: "whitespace" },
    locator: {
      type: "object",
      dynamic: false,
      properties: {
        page: { type: "integer" },
        line: { type: "integer" },
        line_end: { type: "integer" },
        timestamp: { type: "float" },
        timestamp_end: { type: "float" },
        bbox: { type: "object", enabled: false },
        source: { type: "keyword" },
      },
    },
    file_type: { type: "keyword" },
    file_created_at: { type: "date" },
    metadata: { type: "flattened" },
    local_vector: { type: "dense_vector", dims: 100, index: true, similarity: "cosine" },
    local_space: { type: "keyword" },
    remote_vector: { type: "dense_vector", index: true, similarity: "cosine" },
    remote_space: { type: "keyword" },
  },
};

export const file = (userId = "user-1", fileId = "file-1"): FileRef => ({ userId, fileId });

/**
 * The document and action lines the adapter should send for passage `ord` of `f`, with `vectors`
 * (written out by hand, not derived from the passage) when the document should carry any.
 */
export const bulkPair = (
  f: FileRef,
  ord: number,
  passage: ExtractedPassage,
  words: string,
  vectors: Record<string, unknown> = {},
) => [
  { index: { _id: `${f.userId}:${f.fileId}:${ord}`, routing: f.userId } },
  {
    user_id: f.userId,
    file_id: f.fileId,
    ord,
    content: passage.content,
    words,
    locator: passage.locator,
    ...vectors,
  },
];

/** A unit vector of `dims` dimensions along axis `axis`, with `extra` set after it. */
export const axisVector = (dims: number, axis = 0, extra: Record<number, number> = {}): Float32Array => {
  const v = new Float32Array(dims);
  v[axis] = 1;
  for (const [i, value] of Object.entries(extra)) v[Number(i)] = value;
  return v;
};

export const withVectors = (passage: ExtractedPassage, vectors: PassageVectors): IndexedPassage => ({
  ...passage,
  vectors,
});

export const vectorSearchRequest = (
  query: Pick<VectorQuery, "userId" | "slot" | "space" | "vector">,
  size: number,
  numCandidates: number,
): Sent => ({
  method: "POST",
  path: `/${ALIAS}/_search`,
  querystring: { routing: query.userId },
  body: {
    size,
    track_total_hits: false,
    _source: ["file_id", "ord", "content", "locator"],
    knn: {
      field: `${query.slot}_vector`,
      query_vector: [...query.vector],
      k: size,
      num_candidates: numCandidates,
      rescore_vector: { oversample: KNN_RESCORE_OVERSAMPLE },
      filter: [{ term: { user_id: query.userId } }, { term: { [`${query.slot}_space`]: query.space } }],
    },
  },
});

export const searchRequest = (userId: string, text: string, size: number): Sent => ({
  method: "POST",
  path: `/${ALIAS}/_search`,
  querystring: { routing: userId },
  body: {
    size,
    track_total_hits: false,
    _source: ["file_id", "ord", "content", "locator"],
    query: {
      bool: {
        filter: [{ term: { user_id: userId } }],
        should: [{ match: { words: { query: text, operator: "or" } } }],
        minimum_should_match: 1,
      },
    },
  },
});

/** Query types Elasticsearch knows that could appear in a body; what a search may use is a few. */
export const QUERY_TYPES = new Set([
  "bool",
  "match",
  "match_phrase",
  "match_phrase_prefix",
  "match_bool_prefix",
  "multi_match",
  "term",
  "terms",
  "query_string",
  "simple_query_string",
  "regexp",
  "wildcard",
  "prefix",
  "fuzzy",
  "script",
  "intervals",
  "combined_fields",
]);

/** Every key of a body, at any depth (query types among them). */
export function clauseTypes(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => clauseTypes(n, found));
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      found.add(key);
      clauseTypes(value, found);
    }
  }
  return found;
}

export const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );

/**
 * A fresh mock cluster for each test of the calling suite, in the one object returned (so a suite
 * takes it once); the indexes a test opens with `open` are closed after it.
 */
export function useMockCluster(options: { engine?: boolean } = {}): {
  cluster: ReturnType<typeof mockCluster>;
  open: (opts?: Partial<ElasticsearchSearchIndexOptions>) => ElasticsearchSearchIndex;
  /** Indexes to close after the test: those from `open`, and any a test builds itself. */
  opened: ElasticsearchSearchIndex[];
} {
  const cluster = {} as ReturnType<typeof mockCluster>;
  const opened: ElasticsearchSearchIndex[] = [];
  const open = (opts: Partial<ElasticsearchSearchIndexOptions> = {}) => {
    const index = cluster.open(opts);
    opened.push(index);
    return index;
  };

  beforeEach(() => {
    Object.assign(cluster, mockCluster(options));
  });

  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
    // Whatever the test did, nothing it sent holds a query-string query.
    expect(JSON.stringify(cluster.sent)).not.toMatch(/query_string/);
  });

  return { cluster, open, opened };
}
