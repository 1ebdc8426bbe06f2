import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import {
  Client,
  type BaseConnection,
  errors,
  type ClientOptions,
  type ConnectionRequestOptions,
  type ConnectionRequestOptionsAsStream,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
  type ConnectionRequestResponseAsStream,
} from "@elastic/elasticsearch";
import MockModule from "@elastic/elasticsearch-mock";
import { LocusError, type ExtractedPassage } from "@locus/contracts";
import {
  ELASTICSEARCH_MAPPING_VERSION,
  ElasticsearchSearchIndex,
  passageIndexBody,
  vectorSearchBody,
  type ElasticsearchSearchIndexOptions,
} from "../src/elasticsearch-search-index.ts";
import { MAX_TERM_LENGTH } from "@locus/passages";
import {
  queryTerms,
  type FileRef,
  type IndexedPassage,
  type PassageVectors,
  type VectorQuery,
} from "../src/search-index.ts";
import { HOSTILE_QUERIES, searchIndexContract, streamOf, textPassage } from "./search-index.contract.ts";

// The mock's typings declare an ES default export on a CommonJS module; at run time the default
// import is the class itself.
const Mock = MockModule as unknown as typeof MockModule.default;
type Mock = InstanceType<typeof Mock>;

/** Yields each item on its own turn, like a stream read from storage. */
async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) {
    await Promise.resolve();
    yield item;
  }
}

// ---------------------------------------------------------------------------------------------
// A real cluster, when one is configured (docker-compose has one): the shared contract suite.
// ---------------------------------------------------------------------------------------------

const ELASTICSEARCH_URL = process.env.ELASTICSEARCH_URL;

if (ELASTICSEARCH_URL) {
  const host = new URL(ELASTICSEARCH_URL).host;
  const admin = new Client({ node: ELASTICSEARCH_URL, requestTimeout: 30_000 });
  const prefixes = new Set<string>();

  const dropIndexes = async (prefix: string) => {
    // By name: wildcard deletes are refused by default (action.destructive_requires_name).
    const found = await admin.indices.get({ index: `${prefix}-*`, allow_no_indices: true });
    const names = Object.keys(found);
    if (names.length > 0) await admin.indices.delete({ index: names });
    prefixes.delete(prefix);
  };

  afterAll(async () => {
    for (const prefix of [...prefixes]) await dropIndexes(prefix);
    await admin.close();
  });

  const open = () => {
    const indexPrefix = `locus-test-${randomUUID().slice(0, 8)}`;
    prefixes.add(indexPrefix);
    return new ElasticsearchSearchIndex({ node: ELASTICSEARCH_URL, indexPrefix, requestTimeoutMs: 30_000 });
  };

  let current: ElasticsearchSearchIndex | undefined;
  searchIndexContract(
    `ElasticsearchSearchIndex against Elasticsearch at ${host}`,
    () => {
      const index = open();
      current = index;
      return Promise.resolve({
        index,
        async cleanup() {
          await index.close();
          await dropIndexes(index.aliasName);
        },
      });
    },
    // Writes are searchable after a refresh; the adapter already waits for one, this makes sure.
    {
      settle: async () => {
        await admin.indices.refresh({ index: current!.aliasName });
      },
      notOnUserStatistics:
        "Elasticsearch scores with its shard's statistics, every user's, and Lucene's idf (see bm25.ts)",
    },
  );

  describe(`ElasticsearchSearchIndex against Elasticsearch at ${host}`, () => {
    it("rebuild() moves the alias to a new index holding the given passages and drops the old one", async () => {
      const index = open();
      try {
        const before = { userId: randomUUID(), fileId: randomUUID() };
        await index.replaceFilePassages(before, streamOf([textPassage("old heron")]));
        const oldIndexes = Object.keys(await admin.indices.getAlias({ name: index.aliasName }));
        expect(oldIndexes).toEqual([`${index.aliasName}-v${ELASTICSEARCH_MAPPING_VERSION}`]);

        const after = { userId: before.userId, fileId: randomUUID() };
        const result = await index.rebuild(
          each([{ file: after, passages: streamOf([textPassage("new heron"), textPassage("new egret")]) }]),
        );
        expect(result).toEqual({ files: 1, passages: 2 });

        const hits = await index.search({ userId: before.userId, text: "heron egret", limit: 10 });
        expect(hits.map((h) => h.content).sort()).toEqual(["new egret", "new heron"]);
        const now = Object.keys(await admin.indices.getAlias({ name: index.aliasName }));
        expect(now).toHaveLength(1);
        expect(now[0]).toMatch(new RegExp(`^${index.aliasName}-v${ELASTICSEARCH_MAPPING_VERSION}-\\d+$`));
        expect(await admin.indices.exists({ index: oldIndexes })).toBe(false);
      } finally {
        await index.close();
        await dropIndexes(index.aliasName);
      }
    });
  });
} else {
  describe("ElasticsearchSearchIndex against a real Elasticsearch", () => {
    // `pnpm test` starts a cluster with testcontainers where a Docker engine answers, and says why not.
    const why = process.env.LOCUS_TEST_ELASTICSEARCH_ABSENT ?? "ELASTICSEARCH_URL is not set";
    it.skip(`runs the SearchIndex contract suite against a real cluster (not run: ${why})`, () => {
      expect(ELASTICSEARCH_URL).toBeDefined();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Always: the vendor's mock. What the adapter sends, exactly, and how it handles what comes back.
// ---------------------------------------------------------------------------------------------

interface Sent {
  method: string;
  path: string;
  querystring: Record<string, string>;
  body: unknown;
}

interface BulkAction {
  index: { _id: string; routing: string };
}

interface SearchBody {
  size: number;
  query: { bool: { should: Array<Record<string, unknown>> } };
}

interface CreateBody {
  aliases?: Record<string, unknown>;
  settings: Record<string, unknown>;
  mappings: { _source?: unknown; properties: Record<string, unknown> };
}

/** The action lines of a bulk request (every other line; documents in between). */
const actionsOf = (req: Sent) => (req.body as unknown[]).filter((_, i) => i % 2 === 0) as BulkAction[];
const searchOf = (req: Sent) => req.body as SearchBody;

const ALIAS = "locus-passages";
const V1 = `${ALIAS}-v${ELASTICSEARCH_MAPPING_VERSION}`;

/** The mock's connection has no close(), which Client.close() calls. */
function closable(mock: Mock): typeof BaseConnection {
  return class extends mock.getConnection() {
    override close(): Promise<void> {
      return Promise.resolve();
    }
  };
}

const responseError = (statusCode: number, type: string, reason: string) =>
  new errors.ResponseError({
    body: { error: { type, reason }, status: statusCode },
    statusCode,
    headers: {},
    warnings: null,
    meta: {} as ConstructorParameters<typeof errors.ResponseError>[0]["meta"],
  });

/** A minimal cluster: the alias exists (unless told otherwise) and every write succeeds. */
function defaultResponse(req: Sent, state: { aliasExists: boolean }): unknown {
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

function mockCluster(options: { aliasExists?: boolean } = {}) {
  const mock = new Mock();
  const sent: Sent[] = [];
  const state = { aliasExists: options.aliasExists ?? true };
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
      return defaultResponse(req, state) as Record<string, unknown>;
    });
  }
  const client = (extra: Partial<ClientOptions> = {}) =>
    new Client({ node: "http://localhost:9200", Connection: closable(mock), ...extra });
  return {
    mock,
    sent,
    state,
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
const EXPECTED_SIMILARITY = { default: { type: "BM25", k1: 1.2, b: 0.75 } };
const EXPECTED_SETTINGS = { index: { similarity: EXPECTED_SIMILARITY } };

const EXPECTED_MAPPINGS = {
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
    kind: { type: "keyword" },
    local_vector: { type: "dense_vector", dims: 100, index: true, similarity: "cosine" },
    local_space: { type: "keyword" },
    remote_vector: { type: "dense_vector", index: true, similarity: "cosine" },
    remote_space: { type: "keyword" },
  },
};

const file = (userId = "user-1", fileId = "file-1"): FileRef => ({ userId, fileId });

/**
 * The document and action lines the adapter should send for passage `ord` of `f`, with `vectors`
 * (written out by hand, not derived from the passage) when the document should carry any.
 */
const bulkPair = (
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
const axisVector = (dims: number, axis = 0, extra: Record<number, number> = {}): Float32Array => {
  const v = new Float32Array(dims);
  v[axis] = 1;
  for (const [i, value] of Object.entries(extra)) v[Number(i)] = value;
  return v;
};

const withVectors = (passage: ExtractedPassage, vectors: PassageVectors): IndexedPassage => ({
  ...passage,
  vectors,
});

const vectorSearchRequest = (
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
      filter: [{ term: { user_id: query.userId } }, { term: { [`${query.slot}_space`]: query.space } }],
    },
  },
});

const searchRequest = (userId: string, text: string, size: number): Sent => ({
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
const QUERY_TYPES = new Set([
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
function clauseTypes(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => clauseTypes(n, found));
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      found.add(key);
      clauseTypes(value, found);
    }
  }
  return found;
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );

describe("ElasticsearchSearchIndex against @elastic/elasticsearch-mock (no cluster on this machine)", () => {
  let cluster: ReturnType<typeof mockCluster>;
  const opened: ElasticsearchSearchIndex[] = [];
  const open = (opts: Partial<ElasticsearchSearchIndexOptions> = {}) => {
    const index = cluster.open(opts);
    opened.push(index);
    return index;
  };

  beforeEach(() => {
    cluster = mockCluster();
  });

  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
    // Whatever the test did, nothing it sent holds a query-string query.
    expect(JSON.stringify(cluster.sent)).not.toMatch(/query_string/);
  });

  describe("index and alias", () => {
    it("creates the versioned index with the passage mapping and the alias, on first use only", async () => {
      cluster.state.aliasExists = false;
      const index = open();
      await index.search({ userId: "u", text: "revenue", limit: 5 });
      await index.search({ userId: "u", text: "growth", limit: 5 });
      expect(cluster.sent.slice(0, 2)).toEqual([
        { method: "HEAD", path: `/_alias/${ALIAS}`, querystring: {}, body: null },
        {
          method: "PUT",
          path: `/${V1}`,
          querystring: {},
          body: { settings: EXPECTED_SETTINGS, mappings: EXPECTED_MAPPINGS, aliases: { [ALIAS]: {} } },
        },
      ]);
      expect(cluster.sent.slice(2).map((r) => `${r.method} ${r.path}`)).toEqual([
        `POST /${ALIAS}/_search`,
        `POST /${ALIAS}/_search`,
      ]);
    });

    it("creates nothing when the alias exists", async () => {
      const index = open();
      await index.check();
      expect(cluster.sent).toEqual([
        { method: "HEAD", path: `/_alias/${ALIAS}`, querystring: {}, body: null },
      ]);
    });

    it("names the alias and index after indexPrefix, and sizes shards, replicas and vectors as told", async () => {
      cluster.state.aliasExists = false;
      const index = open({
        indexPrefix: "acme-passages",
        shards: 6,
        replicas: 2,
        localVectorDims: 384,
        remoteVectorDims: 1536,
      });
      await index.check();
      const create = cluster.sent[1]!;
      expect(create.path).toBe(`/acme-passages-v${ELASTICSEARCH_MAPPING_VERSION}`);
      const body = create.body as CreateBody;
      expect(body.aliases).toEqual({ "acme-passages": {} });
      expect(body.settings).toEqual({
        index: { number_of_shards: 6, number_of_replicas: 2, similarity: EXPECTED_SIMILARITY },
      });
      expect(body.mappings.properties).toMatchObject({
        local_vector: { type: "dense_vector", dims: 384, index: true, similarity: "cosine" },
        local_space: { type: "keyword" },
        remote_vector: { type: "dense_vector", dims: 1536, index: true, similarity: "cosine" },
        remote_space: { type: "keyword" },
      });
      expect(body.mappings.properties).not.toHaveProperty("vector");
    });

    it("maps two vector fields with their spaces: local of 100 dims by default, remote's left to the cluster", () => {
      const { mappings } = passageIndexBody();
      const vectorFields = Object.entries(mappings.properties ?? {}).filter(([name]) =>
        /vector|space/.test(name),
      );
      expect(Object.fromEntries(vectorFields)).toEqual({
        local_vector: { type: "dense_vector", dims: 100, index: true, similarity: "cosine" },
        local_space: { type: "keyword" },
        remote_vector: { type: "dense_vector", index: true, similarity: "cosine" },
        remote_space: { type: "keyword" },
      });
      // Unset dims must be absent, not undefined or null: Elasticsearch rejects `"dims": null`.
      expect(Object.keys(mappings.properties?.remote_vector ?? {})).not.toContain("dims");
      // Vectors stay out of the stored _source; every field a search returns stays in it.
      expect(mappings._source).toEqual({ excludes: ["local_vector", "remote_vector"] });
      expect(
        passageIndexBody({ localVectorDims: 8, remoteVectorDims: 3072 }).mappings.properties,
      ).toMatchObject({
        local_vector: { dims: 8 },
        remote_vector: { dims: 3072 },
      });
    });

    it("rejects vector dimensions that are not positive integers", () => {
      for (const dims of [0, -1, 1.5, Number.NaN]) {
        expect(
          () => new ElasticsearchSearchIndex({ node: "http://localhost:9200", localVectorDims: dims }),
        ).toThrow(/localVectorDims/);
        expect(
          () => new ElasticsearchSearchIndex({ node: "http://localhost:9200", remoteVectorDims: dims }),
        ).toThrow(/remoteVectorDims/);
      }
    });

    it("when another process created the index first, adds nothing if the alias is there", async () => {
      cluster.state.aliasExists = false;
      let heads = 0;
      cluster.on((req) => {
        if (req.method === "HEAD") return heads++ === 0 ? responseError(404, "not_found", "missing") : "";
        if (req.method === "PUT") return responseError(400, "resource_already_exists_exception", "exists");
        return undefined;
      });
      await open().check();
      expect(cluster.sent.map((r) => `${r.method} ${r.path}`)).toEqual([
        `HEAD /_alias/${ALIAS}`,
        `PUT /${V1}`,
        `HEAD /_alias/${ALIAS}`,
      ]);
    });

    it("gives an index that lost its alias the alias back", async () => {
      cluster.state.aliasExists = false;
      cluster.on((req) =>
        req.method === "PUT" ? responseError(400, "resource_already_exists_exception", "exists") : undefined,
      );
      await open().check();
      expect(cluster.sent.at(-1)).toEqual({
        method: "POST",
        path: "/_aliases",
        querystring: {},
        body: { actions: [{ add: { index: V1, alias: ALIAS } }] },
      });
    });

    it("check() asks the cluster every time, so a readiness probe sees it go away", async () => {
      const index = open();
      await index.check();
      await index.check();
      expect(cluster.sent.filter((r) => r.method === "HEAD")).toHaveLength(2);
      cluster.on(() => new errors.ConnectionError("connect ECONNREFUSED 127.0.0.1:9200"));
      const err = await failureOf(index.check());
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ code: "unavailable", status: 503 });
    });

    it("checks for the alias again after a request finds it gone", async () => {
      let searches = 0;
      cluster.on((req) =>
        req.path.endsWith("/_search") && searches++ === 0
          ? responseError(404, "index_not_found_exception", "no such index [locus-passages]")
          : undefined,
      );
      const index = open();
      await expect(index.search({ userId: "u", text: "revenue", limit: 5 })).rejects.toMatchObject({
        statusCode: 404,
      });
      await index.search({ userId: "u", text: "revenue", limit: 5 });
      expect(cluster.sent.map((r) => `${r.method} ${r.path}`)).toEqual([
        `HEAD /_alias/${ALIAS}`,
        `POST /${ALIAS}/_search`,
        `HEAD /_alias/${ALIAS}`,
        `POST /${ALIAS}/_search`,
      ]);
    });

    it("rejects an index prefix Elasticsearch would refuse, and a config with no cluster", () => {
      for (const indexPrefix of ["Locus", "_locus", "-locus", "lo cus", "lo*", ""]) {
        expect(() => new ElasticsearchSearchIndex({ node: "http://localhost:9200", indexPrefix })).toThrow(
          /index prefix/,
        );
      }
      expect(() => new ElasticsearchSearchIndex({})).toThrow(/node URL or an Elastic Cloud id/);
      expect(() => new ElasticsearchSearchIndex({ node: "http://localhost:9200", bulkBatchSize: 0 })).toThrow(
        /bulkBatchSize/,
      );
    });
  });

  describe("replaceFilePassages", () => {
    it("bulk-loads in batches with ids and routing, deletes ords past the count, and waits for the last batch's refresh", async () => {
      const f = file("6f1c2f9a-1b2c-4d3e-8f40-0123456789ab", "0e6f3b0c-5d0e-4e5c-9d6e-7f8a9b0c1d2e");
      const passages = [
        textPassage("Quarterly Revenue grew.", 1, 1),
        textPassage("Margins held.", 1, 2),
        { content: "Le café, naïve!", locator: { page: 2, line: 1, line_end: 1, source: "text" } },
        {
          content: "scanned words",
          locator: {
            page: 3,
            line: 2,
            line_end: 2,
            bbox: { x: 1.5, y: 2, width: 30, height: 4 },
            source: "ocr",
          },
        },
        { content: "spoken words", locator: { timestamp: 12.5, timestamp_end: 19.75, source: "speech" } },
      ] as ExtractedPassage[];
      const index = open({ bulkBatchSize: 2 });
      expect(await index.replaceFilePassages(f, streamOf(passages))).toBe(5);

      // The passages' terms (folded, Porter-stemmed), written out.
      const words = ["quarterli revenu grew", "margin held", "le cafe naiv", "scan word", "spoken word"];
      const pairs = passages.map((p, i) => bulkPair(f, i, p, words[i]!));
      expect(cluster.calls()).toEqual([
        {
          method: "POST",
          path: `/${ALIAS}/_bulk`,
          querystring: { require_alias: "true" },
          body: [...pairs[0]!, ...pairs[1]!],
        },
        {
          method: "POST",
          path: `/${ALIAS}/_bulk`,
          querystring: { require_alias: "true" },
          body: [...pairs[2]!, ...pairs[3]!],
        },
        {
          method: "POST",
          path: `/${ALIAS}/_delete_by_query`,
          querystring: { routing: f.userId, refresh: "false", conflicts: "proceed" },
          body: {
            query: {
              bool: {
                filter: [
                  { term: { user_id: f.userId } },
                  { term: { file_id: f.fileId } },
                  { range: { ord: { gte: 5 } } },
                ],
              },
            },
          },
        },
        {
          method: "POST",
          path: `/${ALIAS}/_bulk`,
          querystring: { require_alias: "true", refresh: "wait_for" },
          body: pairs[4],
        },
      ]);
    });

    it("with no passages, sends no bulk and deletes the file's passages with a forced refresh", async () => {
      const f = file();
      expect(await open().replaceFilePassages(f, streamOf([]))).toBe(0);
      expect(cluster.calls()).toEqual([
        {
          method: "POST",
          path: `/${ALIAS}/_delete_by_query`,
          querystring: { routing: f.userId, refresh: "true", conflicts: "proceed" },
          body: {
            query: {
              bool: {
                filter: [
                  { term: { user_id: f.userId } },
                  { term: { file_id: f.fileId } },
                  { range: { ord: { gte: 0 } } },
                ],
              },
            },
          },
        },
      ]);
    });

    it("closes a bulk request at about 5 MB, whatever the batch size", async () => {
      // ~2 MB a passage: content plus its terms (words of at most MAX_TERM_LENGTH letters each).
      const big = "x"
        .repeat(MAX_TERM_LENGTH)
        .concat(" ")
        .repeat(1_000_000 / (MAX_TERM_LENGTH + 1));
      const f = file();
      await open().replaceFilePassages(f, streamOf(Array.from({ length: 5 }, () => textPassage(big))));
      const bulks = cluster.calls().filter((r) => r.path.endsWith("/_bulk"));
      expect(bulks.map((r) => actionsOf(r).length)).toEqual([2, 2, 1]);
      for (const bulk of bulks) {
        const bytes = (bulk.body as unknown[]).reduce<number>(
          (n, line) => n + JSON.stringify(line).length + 1,
          0,
        );
        expect(bytes).toBeLessThanOrEqual(5 * 1024 * 1024);
      }
    });

    it("gives ids that two users' files can never share", async () => {
      const index = open();
      await index.replaceFilePassages(file("a:b", "c"), streamOf([textPassage("one")]));
      await index.replaceFilePassages(file("a", "b:c"), streamOf([textPassage("two")]));
      const ids = cluster
        .calls()
        .filter((r) => r.path.endsWith("/_bulk"))
        .map((r) => actionsOf(r)[0]!.index._id);
      expect(ids).toEqual(["a%3Ab:c:0", "a:b%3Ac:0"]);
    });

    it("writes each vector as plain numbers with its space, and leaves out vectors cosine cannot take", async () => {
      const f = file();
      const local = axisVector(100, 3, { 4: -0.5 });
      const remote = new Float32Array([0.25, -0.5, 0.125]);
      const passages: IndexedPassage[] = [
        withVectors(textPassage("both slots"), {
          local: { space: "local:wink-sg-100d:sif-0.001", vector: local },
          remote: { space: "openai:text-embedding-3-small", vector: remote },
        }),
        // A passage without a known word gets a zero local vector: indexed without it.
        withVectors(textPassage("zero local"), {
          local: { space: "local:wink-sg-100d:sif-0.001", vector: new Float32Array(100) },
          remote: { space: "openai:text-embedding-3-small", vector: remote },
        }),
        withVectors(textPassage("unusable vectors"), {
          local: { space: "local:wink-sg-100d:sif-0.001", vector: new Float32Array(0) },
          remote: { space: "openai:text-embedding-3-small", vector: new Float32Array([Number.NaN, 1, 0]) },
        }),
        withVectors(textPassage("no vectors"), {}),
        textPassage("older caller"),
      ];
      expect(await open().replaceFilePassages(f, streamOf(passages))).toBe(5);
      const bulk = cluster.calls().find((r) => r.path.endsWith("/_bulk"))!;
      const localNumbers = Array.from({ length: 100 }, (_, i) => (i === 3 ? 1 : i === 4 ? -0.5 : 0));
      expect(bulk.body).toEqual([
        ...bulkPair(f, 0, passages[0]!, "both slot", {
          local_vector: localNumbers,
          local_space: "local:wink-sg-100d:sif-0.001",
          remote_vector: [0.25, -0.5, 0.125],
          remote_space: "openai:text-embedding-3-small",
        }),
        ...bulkPair(f, 1, passages[1]!, "zero local", {
          remote_vector: [0.25, -0.5, 0.125],
          remote_space: "openai:text-embedding-3-small",
        }),
        ...bulkPair(f, 2, passages[2]!, "unus vector"),
        ...bulkPair(f, 3, passages[3]!, "no vector"),
        ...bulkPair(f, 4, passages[4]!, "older caller"),
      ]);
      // Plain JSON arrays on the wire, not a typed array's {"0":…,"1":…} object.
      const documents = (bulk.body as Array<Record<string, unknown>>).filter((_, i) => i % 2 === 1);
      expect(Array.isArray(documents[0]!.local_vector)).toBe(true);
    });

    it("retries a bulk request rejected with 429, with back-off, then succeeds", async () => {
      let bulks = 0;
      cluster.on((req) =>
        req.path.endsWith("/_bulk") && bulks++ === 0
          ? responseError(429, "es_rejected_execution_exception", "rejected execution (queue capacity 200)")
          : undefined,
      );
      const f = file();
      const started = Date.now();
      expect(
        await open({ bulkRetryDelayMs: 40 }).replaceFilePassages(
          f,
          streamOf([textPassage("retried passage")]),
        ),
      ).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(20);
      const sentBulks = cluster.calls().filter((r) => r.path.endsWith("/_bulk"));
      expect(sentBulks).toHaveLength(2);
      expect(sentBulks[1]).toEqual(sentBulks[0]);
    });

    it("retries only the items rejected with 429 inside an accepted bulk request", async () => {
      let bulks = 0;
      cluster.on((req) => {
        if (!req.path.endsWith("/_bulk") || bulks++ > 0) return undefined;
        const actions = actionsOf(req);
        return {
          took: 1,
          errors: true,
          items: actions.map((a, i) => ({
            index:
              i === 1
                ? {
                    _index: V1,
                    _id: a.index._id,
                    status: 429,
                    error: { type: "es_rejected_execution_exception", reason: "queue full" },
                  }
                : { _index: V1, _id: a.index._id, status: 201, result: "created" },
          })),
        };
      });
      const f = file();
      const passages = [textPassage("first"), textPassage("second"), textPassage("third")];
      expect(await open().replaceFilePassages(f, streamOf(passages))).toBe(3);
      const bulks2 = cluster.calls().filter((r) => r.path.endsWith("/_bulk"));
      expect(bulks2.map((r) => actionsOf(r).map((a) => a.index._id))).toEqual([
        [`${f.userId}:${f.fileId}:0`, `${f.userId}:${f.fileId}:1`, `${f.userId}:${f.fileId}:2`],
        [`${f.userId}:${f.fileId}:1`],
      ]);
      // The retry is still the last batch: it carries the refresh.
      expect(bulks2[1]!.querystring).toEqual({ require_alias: "true", refresh: "wait_for" });
    });

    it("gives up as unavailable when the cluster keeps answering 429, after bulkMaxAttempts", async () => {
      cluster.on((req) =>
        req.path.endsWith("/_bulk")
          ? responseError(429, "es_rejected_execution_exception", "queue full")
          : undefined,
      );
      const err = await failureOf(
        open({ bulkMaxAttempts: 3 }).replaceFilePassages(file(), streamOf([textPassage("never taken")])),
      );
      expect(err).toMatchObject({
        code: "unavailable",
        message: "The search index is unavailable; try again shortly.",
      });
      expect(cluster.calls().filter((r) => r.path.endsWith("/_bulk"))).toHaveLength(3);
    });

    it("fails with the item's reason when one passage of a bulk is rejected for good (400)", async () => {
      cluster.on((req) => {
        if (!req.path.endsWith("/_bulk")) return undefined;
        const actions = actionsOf(req);
        return {
          took: 1,
          errors: true,
          items: actions.map((a, i) => ({
            index:
              i === 0
                ? {
                    _index: V1,
                    _id: a.index._id,
                    status: 400,
                    error: {
                      type: "document_parsing_exception",
                      reason: "[1:120] failed to parse field [locator.page] of type [integer]",
                    },
                  }
                : { _index: V1, _id: a.index._id, status: 201, result: "created" },
          })),
        };
      });
      const f = file();
      const err = await failureOf(
        open().replaceFilePassages(f, streamOf([textPassage("bad"), textPassage("good")])),
      );
      expect(err).not.toBeInstanceOf(LocusError);
      expect((err as Error).message).toBe(
        `Elasticsearch rejected passage ${f.userId}:${f.fileId}:0 (400 document_parsing_exception): ` +
          "[1:120] failed to parse field [locator.page] of type [integer]",
      );
      // Not retried: the same document would be rejected again.
      expect(cluster.calls().filter((r) => r.path.endsWith("/_bulk"))).toHaveLength(1);
    });

    it("sends nothing for a stream that fails before its first batch is full", async () => {
      async function* broken(): AsyncGenerator<ExtractedPassage> {
        yield textPassage("partial");
        await Promise.resolve();
        throw new Error("extraction stream broke");
      }
      await expect(open().replaceFilePassages(file(), broken())).rejects.toThrow("extraction stream broke");
      expect(cluster.calls()).toEqual([]);
    });
  });

  describe("deleteFilePassages", () => {
    it("deletes by query on the alias, routed to the user, filtered by user and file, with a refresh", async () => {
      const f = file();
      await open().deleteFilePassages(f);
      expect(cluster.calls()).toEqual([
        {
          method: "POST",
          path: `/${ALIAS}/_delete_by_query`,
          querystring: { routing: f.userId, refresh: "true", conflicts: "proceed" },
          body: {
            query: { bool: { filter: [{ term: { user_id: f.userId } }, { term: { file_id: f.fileId } }] } },
          },
        },
      ]);
    });

    it("reports a delete that the cluster could not finish (a rejected batch) as unavailable", async () => {
      cluster.on((req) =>
        req.path.endsWith("/_delete_by_query")
          ? {
              took: 1,
              timed_out: false,
              deleted: 3,
              failures: [
                {
                  index: V1,
                  id: "x",
                  status: 429,
                  cause: { type: "es_rejected_execution_exception", reason: "queue full" },
                },
              ],
            }
          : undefined,
      );
      await expect(open().deleteFilePassages(file())).rejects.toMatchObject({ code: "unavailable" });
    });
  });

  describe("search", () => {
    it("sends a bool query: the user filter, one match on the query's terms, the limit, routed by user", async () => {
      await open().search({ userId: "user-7", text: "Quarterly REVENUE growth, of the year!", limit: 7 });
      expect(cluster.calls()).toEqual([searchRequest("user-7", "quarterli revenu growth year", 7)]);
    });

    it("sends the terms every backend searches for: folded and stemmed, no phrase or exact-form boost", async () => {
      await open().search({ userId: "user-7", text: "Cafés", limit: 20 });
      expect(cluster.calls()).toEqual([searchRequest("user-7", "cafe", 20)]);
    });

    it("keeps stop words when the query has nothing else, like every backend", async () => {
      const index = open();
      await index.search({ userId: "u", text: "The end of it", limit: 3 });
      await index.search({ userId: "u", text: "To be or not to be", limit: 3 });
      expect(cluster.calls().map((r) => searchOf(r).query.bool.should[0])).toEqual([
        { match: { words: { query: "end", operator: "or" } } },
        { match: { words: { query: "to be or not", operator: "or" } } },
      ]);
    });

    it("passagesInRanges (mock cluster): one routed search filtering the user, each range a file and ord span; hits in file and ord order", async () => {
      cluster.on((req) =>
        req.path.endsWith("/_search")
          ? {
              took: 1,
              timed_out: false,
              hits: {
                hits: [
                  {
                    _index: V1,
                    _id: "u:f1:4",
                    _score: 0,
                    _source: { file_id: "f1", ord: 4, content: "d", locator: { page: 2, source: "text" } },
                  },
                  {
                    _index: V1,
                    _id: "u:f2:0",
                    _score: 0,
                    _source: { file_id: "f2", ord: 0, content: "x", locator: { page: 1, source: "text" } },
                  },
                  {
                    _index: V1,
                    _id: "u:f1:3",
                    _score: 0,
                    _source: { file_id: "f1", ord: 3, content: "c", locator: { page: 2, source: "text" } },
                  },
                ],
              },
            }
          : undefined,
      );
      const index = open();
      const hits = await index.passagesInRanges({
        userId: "u",
        ranges: [
          { fileId: "f1", from: 3, to: 4 },
          { fileId: "f2", from: -2, to: 100 },
        ],
      });
      expect(hits.map((h) => [h.id, h.fileId, h.ord, h.score])).toEqual([
        ["u:f1:3", "f1", 3, 0],
        ["u:f1:4", "f1", 4, 0],
        ["u:f2:0", "f2", 0, 0],
      ]);
      expect(await index.passagesInRanges({ userId: "u", ranges: [] })).toEqual([]);
      expect(cluster.calls()).toEqual([
        {
          method: "POST",
          path: `/${ALIAS}/_search`,
          querystring: { routing: "u" },
          body: {
            size: 18,
            track_total_hits: false,
            _source: ["file_id", "ord", "content", "locator"],
            query: {
              bool: {
                filter: [{ term: { user_id: "u" } }],
                should: [
                  { bool: { filter: [{ term: { file_id: "f1" } }, { range: { ord: { gte: 3, lte: 4 } } }] } },
                  {
                    bool: { filter: [{ term: { file_id: "f2" } }, { range: { ord: { gte: 0, lte: 15 } } }] },
                  },
                ],
                minimum_should_match: 1,
              },
            },
          },
        },
      ]);
    });

    it("caps the size at the index's result window and sends nothing for a limit of 0", async () => {
      const index = open();
      await index.search({ userId: "u", text: "revenue", limit: 50_000 });
      expect(await index.search({ userId: "u", text: "revenue", limit: 0 })).toEqual([]);
      expect(cluster.calls().map((r) => searchOf(r).size)).toEqual([10_000]);
    });

    it("maps hits to PassageHits with scores normalised as s / (1 + s), in the cluster's order", async () => {
      const locator = {
        page: 4,
        line: 2,
        line_end: 3,
        bbox: { x: 1, y: 2, width: 3, height: 4 },
        source: "ocr",
      };
      cluster.on((req) =>
        req.path.endsWith("/_search")
          ? {
              took: 2,
              timed_out: false,
              hits: {
                max_score: 3,
                hits: [
                  {
                    _index: V1,
                    _id: "u:f1:0",
                    _score: 3,
                    _source: { file_id: "f1", ord: 0, content: "Revenue, up.", locator },
                  },
                  {
                    _index: V1,
                    _id: "u:f2:5",
                    _score: 1,
                    _source: {
                      file_id: "f2",
                      ord: 5,
                      content: "revenues",
                      locator: { timestamp: 61, source: "speech" },
                    },
                  },
                ],
              },
            }
          : undefined,
      );
      expect(await open().search({ userId: "u", text: "revenue", limit: 5 })).toEqual([
        { id: "u:f1:0", fileId: "f1", ord: 0, content: "Revenue, up.", locator, score: 0.75 },
        {
          id: "u:f2:5",
          fileId: "f2",
          ord: 5,
          content: "revenues",
          locator: { timestamp: 61, source: "speech" },
          score: 0.5,
        },
      ]);
    });

    it("sends no request for queries without words", async () => {
      const index = open();
      for (const text of ["", "   ", "!!!", "...,;:?", "🚀", "\u200b", "\u0000"]) {
        expect(await index.search({ userId: "u", text, limit: 5 })).toEqual([]);
      }
      expect(cluster.sent).toEqual([]);
    });

    it("turns hostile queries into no request, or into one match over plain terms only", async () => {
      const index = open();
      for (const text of HOSTILE_QUERIES) {
        const before = cluster.calls().length;
        await index.search({ userId: "victim", text, limit: 10 });
        const sent = cluster.calls().slice(before);
        const terms = queryTerms(text);
        if (terms.length === 0) {
          expect([text, sent]).toEqual([text, []]);
          continue;
        }
        expect(sent).toEqual([searchRequest("victim", terms.join(" "), 10)]);
        expect([...clauseTypes(searchOf(sent[0]!).query)].filter((k) => QUERY_TYPES.has(k)).sort()).toEqual([
          "bool",
          "match",
          "term",
        ]);
        for (const word of terms.join(" ").split(" ")) expect(word).toMatch(/^[\p{L}\p{M}\p{N}]+$/u);
        const body = JSON.stringify(sent[0]!.body);
        expect(body).not.toMatch(/query_string|simple_query_string|"regexp"|"wildcard"|"prefix"|"script"/);
      }
    });

    it("fails with unavailable when a search gets 503 (after the client's own retries)", async () => {
      cluster.on((req) =>
        req.path.endsWith("/_search")
          ? responseError(503, "search_phase_execution_exception", "all shards failed")
          : undefined,
      );
      const index = new ElasticsearchSearchIndex({ client: cluster.client({ maxRetries: 1 }) });
      opened.push(index);
      const err = await failureOf(index.search({ userId: "u", text: "revenue", limit: 5 }));
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({
        code: "unavailable",
        status: 503,
        message: "The search index is unavailable; try again shortly.",
      });
      expect(cluster.calls().filter((r) => r.path.endsWith("/_search"))).toHaveLength(2);
    });

    it("fails with unavailable when the cluster refuses connections", async () => {
      cluster.on(() => new errors.ConnectionError("connect ECONNREFUSED 127.0.0.1:9200"));
      const index = new ElasticsearchSearchIndex({ client: cluster.client({ maxRetries: 0 }) });
      opened.push(index);
      await expect(index.search({ userId: "u", text: "revenue", limit: 5 })).rejects.toMatchObject({
        code: "unavailable",
      });
    });

    it("passes other errors through unchanged (a bad request is a bug, not an outage)", async () => {
      cluster.on((req) =>
        req.path.endsWith("/_search") ? responseError(400, "parsing_exception", "unknown query") : undefined,
      );
      const err = await failureOf(open().search({ userId: "u", text: "revenue", limit: 5 }));
      expect(err).not.toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ name: "ResponseError", statusCode: 400 });
    });

    it("fails with unavailable within requestTimeout when the cluster never answers a search", async () => {
      // The vendor's mock answers every request at once; this route never does, and (as the
      // client's real HTTP connections do) the connection gives up after the request timeout.
      const Base = closable(cluster.mock);
      let searches = 0;
      class NeverAnswersSearch extends Base {
        override request(
          params: ConnectionRequestParams,
          options: ConnectionRequestOptions,
        ): Promise<ConnectionRequestResponse>;
        override request(
          params: ConnectionRequestParams,
          options: ConnectionRequestOptionsAsStream,
        ): Promise<ConnectionRequestResponseAsStream>;
        override request(
          params: ConnectionRequestParams,
          options: ConnectionRequestOptions,
        ): Promise<ConnectionRequestResponse | ConnectionRequestResponseAsStream> {
          if (!params.path.endsWith("/_search")) return super.request(params, options);
          searches += 1;
          return new Promise((_, reject) => {
            setTimeout(() => reject(new errors.TimeoutError("Request timed out")), options.timeout);
          });
        }
      }
      const index = new ElasticsearchSearchIndex({
        client: new Client({
          node: "http://localhost:9200",
          Connection: NeverAnswersSearch,
          requestTimeout: 150,
        }),
      });
      opened.push(index);
      const started = Date.now();
      const err = await failureOf(index.search({ userId: "u", text: "revenue", limit: 5 }));
      const elapsed = Date.now() - started;
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ code: "unavailable", status: 503 });
      expect(elapsed).toBeGreaterThanOrEqual(140);
      // Timeouts are not retried: one request, not maxRetries of them (counted, not timed, so a
      // busy CI cannot flake it).
      expect(searches).toBe(1);
    });
  });

  describe("vectorSearch", () => {
    const LOCAL_SPACE = "local:wink-sg-100d:sif-0.001";
    const REMOTE_SPACE = "openai:text-embedding-3-small";

    it("sends one kNN search on the slot's field, routed to the user, filtered on user and space", async () => {
      const index = open({ remoteVectorDims: 3 });
      const local = {
        userId: "user-7",
        slot: "local" as const,
        space: LOCAL_SPACE,
        vector: axisVector(100, 2),
      };
      const remote = {
        userId: "user-8",
        slot: "remote" as const,
        space: REMOTE_SPACE,
        vector: new Float32Array([0.5, -0.5, 0.25]),
      };
      await index.vectorSearch({ ...local, limit: 7 });
      await index.vectorSearch({ ...remote, limit: 40 });
      await index.vectorSearch({ ...local, limit: 5_000 });
      await index.vectorSearch({ ...local, limit: 50_000 });
      expect(cluster.calls()).toEqual([
        vectorSearchRequest(local, 7, 100),
        vectorSearchRequest(remote, 40, 160),
        vectorSearchRequest(local, 5_000, 10_000),
        vectorSearchRequest(local, 10_000, 10_000),
      ]);
      // The exported body is what goes on the wire, and holds no query a user's text could shape.
      expect(cluster.calls()[1]!.body).toEqual(vectorSearchBody(remote, 40));
      expect([...clauseTypes(cluster.calls()[0]!.body)].filter((k) => QUERY_TYPES.has(k))).toEqual(["term"]);
    });

    it("maps hits to PassageHits with the cluster's cosine _score, (1 + cos) / 2, back to cos (negatives as 0)", async () => {
      const hit = (id: string, score: number) => ({
        _index: V1,
        _id: id,
        _score: score,
        _source: {
          file_id: `file-of-${id}`,
          ord: 0,
          content: `passage ${id}`,
          locator: { page: 1, source: "text" },
        },
      });
      cluster.on((req) =>
        req.path.endsWith("/_search")
          ? {
              took: 1,
              timed_out: false,
              hits: {
                hits: [hit("a", 1), hit("b", 0.875), hit("c", 0.5), hit("d", 0.25), hit("e", 0)],
              },
            }
          : undefined,
      );
      const hits = await open().vectorSearch({
        userId: "u",
        slot: "local",
        space: LOCAL_SPACE,
        vector: axisVector(100),
        limit: 5,
      });
      expect(hits).toEqual(
        [
          ["a", 1],
          ["b", 0.75],
          ["c", 0],
          ["d", 0],
          ["e", 0],
        ].map(([id, score]) => ({
          id,
          fileId: `file-of-${id}`,
          ord: 0,
          content: `passage ${id}`,
          locator: { page: 1, source: "text" },
          score,
        })),
      );
    });

    it("sends no request for a query that can match nothing", async () => {
      const index = open({ remoteVectorDims: 3 });
      const base = {
        userId: "u",
        slot: "local" as const,
        space: LOCAL_SPACE,
        vector: axisVector(100),
        limit: 5,
      };
      const nothing: VectorQuery[] = [
        { ...base, limit: 0 },
        { ...base, limit: -3 },
        { ...base, limit: 0.5 },
        { ...base, limit: Number.NaN },
        { ...base, slot: "cloud" as VectorQuery["slot"] },
        { ...base, slot: "__proto__" as VectorQuery["slot"] },
        { ...base, vector: new Float32Array(0) },
        { ...base, vector: new Float32Array(100) },
        { ...base, vector: axisVector(100, 0, { 1: Number.NaN }) },
        { ...base, vector: axisVector(100, 0, { 1: Number.POSITIVE_INFINITY }) },
        // Dimensions the slot's vectors cannot have: no passage holds a vector of that space.
        { ...base, vector: axisVector(384) },
        { ...base, slot: "remote", space: REMOTE_SPACE, vector: axisVector(1536) },
      ];
      for (const query of nothing) expect(await index.vectorSearch(query)).toEqual([]);
      expect(cluster.sent).toEqual([]);
    });

    it("leaves remote dimensions it was not given to the cluster", async () => {
      const query = { userId: "u", slot: "remote" as const, space: REMOTE_SPACE, vector: axisVector(1536) };
      await open().vectorSearch({ ...query, limit: 3 });
      expect(cluster.calls()).toEqual([vectorSearchRequest(query, 3, 100)]);
    });

    it("fails with unavailable when a vector search gets 503 (after the client's own retries)", async () => {
      cluster.on((req) =>
        req.path.endsWith("/_search")
          ? responseError(503, "search_phase_execution_exception", "all shards failed")
          : undefined,
      );
      const index = new ElasticsearchSearchIndex({ client: cluster.client({ maxRetries: 1 }) });
      opened.push(index);
      const err = await failureOf(
        index.vectorSearch({
          userId: "u",
          slot: "local",
          space: LOCAL_SPACE,
          vector: axisVector(100),
          limit: 5,
        }),
      );
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({
        code: "unavailable",
        status: 503,
        message: "The search index is unavailable; try again shortly.",
      });
      expect(cluster.calls().filter((r) => r.path.endsWith("/_search"))).toHaveLength(2);
    });

    it("fails with unavailable when the cluster refuses connections", async () => {
      // The alias check passes; the search itself (then the ready index's next call) cannot connect.
      cluster.on((req) =>
        req.path.endsWith("/_search")
          ? new errors.ConnectionError("connect ECONNREFUSED 127.0.0.1:9200")
          : undefined,
      );
      const index = new ElasticsearchSearchIndex({ client: cluster.client({ maxRetries: 0 }) });
      opened.push(index);
      const err = await failureOf(
        index.vectorSearch({
          userId: "u",
          slot: "local",
          space: LOCAL_SPACE,
          vector: axisVector(100),
          limit: 5,
        }),
      );
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ code: "unavailable", status: 503 });
    });

    it("passes other errors through, and checks for the alias again after it is found gone", async () => {
      let searches = 0;
      cluster.on((req) => {
        if (!req.path.endsWith("/_search")) return undefined;
        searches += 1;
        if (searches === 1) return responseError(404, "index_not_found_exception", "no such index");
        if (searches === 2) return responseError(400, "illegal_argument_exception", "bad knn");
        return undefined;
      });
      const index = open();
      const query = {
        userId: "u",
        slot: "local" as const,
        space: LOCAL_SPACE,
        vector: axisVector(100),
        limit: 5,
      };
      await expect(index.vectorSearch(query)).rejects.toMatchObject({ statusCode: 404 });
      const err = await failureOf(index.vectorSearch(query));
      expect(err).not.toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ name: "ResponseError", statusCode: 400 });
      expect(cluster.sent.map((r) => `${r.method} ${r.path}`)).toEqual([
        `HEAD /_alias/${ALIAS}`,
        `POST /${ALIAS}/_search`,
        `HEAD /_alias/${ALIAS}`,
        `POST /${ALIAS}/_search`,
      ]);
    });
  });

  describe("rebuild", () => {
    it("loads a new index, refreshes it, swaps the alias in one request and deletes the old index", async () => {
      const a = file("user-a", "file-a");
      const b = file("user-b", "file-b");
      const passagesA = [textPassage("alpha one"), textPassage("alpha two"), textPassage("alpha three")];
      const passagesB = [
        withVectors(textPassage("beta one"), { local: { space: "local:test", vector: axisVector(100, 7) } }),
      ];
      const index = open({ bulkBatchSize: 2 });
      const result = await index.rebuild(
        each([
          { file: a, passages: streamOf(passagesA) },
          { file: b, passages: streamOf(passagesB) },
        ]),
      );
      expect(result).toEqual({ files: 2, passages: 4 });

      const created = cluster.sent.find(
        (r) => r.method === "PUT" && r.path !== `/${V1}` && !r.path.includes("_"),
      );
      const target = created!.path.slice(1);
      expect(target).toMatch(new RegExp(`^${ALIAS}-v${ELASTICSEARCH_MAPPING_VERSION}-\\d+$`));
      const termsA = ["alpha on", "alpha two", "alpha three"];
      const pairsA = passagesA.map((p, i) => bulkPair(a, i, p, termsA[i]!));
      const pairB = bulkPair(b, 0, passagesB[0]!, "beta on", {
        local_vector: Array.from({ length: 100 }, (_, i) => (i === 7 ? 1 : 0)),
        local_space: "local:test",
      });
      expect(cluster.sent).toEqual([
        { method: "HEAD", path: `/_alias/${ALIAS}`, querystring: {}, body: null },
        { method: "GET", path: `/_alias/${ALIAS}`, querystring: {}, body: null },
        {
          method: "PUT",
          path: `/${target}`,
          querystring: {},
          body: { mappings: EXPECTED_MAPPINGS, settings: { ...EXPECTED_SETTINGS, refresh_interval: "-1" } },
        },
        { method: "POST", path: `/${target}/_bulk`, querystring: {}, body: [...pairsA[0]!, ...pairsA[1]!] },
        { method: "POST", path: `/${target}/_bulk`, querystring: {}, body: [...pairsA[2]!, ...pairB] },
        { method: "PUT", path: `/${target}/_settings`, querystring: {}, body: { refresh_interval: null } },
        { method: "GET", path: `/${target}/_refresh`, querystring: {}, body: null },
        {
          method: "POST",
          path: "/_aliases",
          querystring: {},
          body: {
            actions: [{ remove: { index: V1, alias: ALIAS } }, { add: { index: target, alias: ALIAS } }],
          },
        },
        { method: "DELETE", path: `/${V1}`, querystring: {}, body: null },
      ]);
    });

    it("on a fresh cluster, creates the first index and points the alias at it", async () => {
      cluster.state.aliasExists = false;
      await open().rebuild(each([{ file: file(), passages: streamOf([textPassage("first")]) }]));
      const swap = cluster.sent.find((r) => r.path === "/_aliases");
      expect((swap?.body as { actions: unknown[] }).actions).toEqual([
        {
          add: {
            index: expect.stringMatching(
              new RegExp(`^locus-passages-v${ELASTICSEARCH_MAPPING_VERSION}-\\d+$`),
            ),
            alias: ALIAS,
          },
        },
      ]);
      // No old index to look up or delete.
      expect(cluster.sent.some((r) => r.path === `/_alias/${ALIAS}` && r.method === "GET")).toBe(false);
      expect(cluster.sent.some((r) => r.method === "DELETE")).toBe(false);
    });

    it("leaves the alias alone and deletes the half-built index when the source fails", async () => {
      async function* failing(): AsyncGenerator<{
        file: FileRef;
        passages: AsyncIterable<ExtractedPassage>;
      }> {
        yield { file: file(), passages: streamOf([textPassage("loaded")]) };
        await Promise.resolve();
        throw new Error("extraction store unreachable");
      }
      await expect(open().rebuild(failing())).rejects.toThrow("extraction store unreachable");
      const target = cluster.sent.find((r) => r.method === "PUT")!.path;
      expect(cluster.sent.some((r) => r.path === "/_aliases")).toBe(false);
      expect(cluster.sent.at(-1)).toMatchObject({ method: "DELETE", path: target });
    });
  });

  it("close() closes the client, once", async () => {
    const client = cluster.client();
    let closes = 0;
    const close = client.close.bind(client);
    client.close = () => {
      closes += 1;
      return close();
    };
    const index = new ElasticsearchSearchIndex({ client });
    await index.close();
    await index.close();
    expect(closes).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// The connection settings through the client's real HTTP connection, against local servers that
// are not Elasticsearch: what reaches the wire, and a server that never answers.
// ---------------------------------------------------------------------------------------------

describe("ElasticsearchSearchIndex connection settings against a local HTTP server (no Elasticsearch)", () => {
  /** Answers every request as a cluster whose alias exists, recording the headers. */
  async function fakeNode(): Promise<{
    url: string;
    headers: IncomingHttpHeaders[];
    close(): Promise<void>;
  }> {
    const headers: IncomingHttpHeaders[] = [];
    const server = createHttpServer((req, res) => {
      headers.push(req.headers);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "x-elastic-product": "Elasticsearch" });
        res.end(req.method === "HEAD" ? undefined : JSON.stringify({ hits: { hits: [] } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      headers,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }

  it("sends the API key, or basic auth, on every request", async () => {
    const node = await fakeNode();
    try {
      const withKey = new ElasticsearchSearchIndex({ node: node.url, apiKey: "a2V5LWlkOnNlY3JldA==" });
      await withKey.search({ userId: "u", text: "revenue", limit: 1 });
      await withKey.close();
      const withPassword = new ElasticsearchSearchIndex({
        node: node.url,
        username: "locus",
        password: "s3cret",
      });
      await withPassword.check();
      await withPassword.close();
      expect(node.headers.map((h) => h.authorization)).toEqual([
        "ApiKey a2V5LWlkOnNlY3JldA==",
        "ApiKey a2V5LWlkOnNlY3JldA==",
        `Basic ${Buffer.from("locus:s3cret").toString("base64")}`,
      ]);
    } finally {
      await node.close();
    }
  });

  it("fails with unavailable after requestTimeoutMs when the server accepts but never answers", async () => {
    const sockets = new Set<Socket>();
    const silent = createTcpServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    // The client's default connection (undici) keeps time in steps of about a second, so a
    // timeout below one second is not honoured to the millisecond.
    const index = new ElasticsearchSearchIndex({ node: `http://127.0.0.1:${port}`, requestTimeoutMs: 1_000 });
    try {
      const started = Date.now();
      const err = await failureOf(index.search({ userId: "u", text: "revenue", limit: 5 }));
      const elapsed = Date.now() - started;
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ code: "unavailable", status: 503 });
      expect(elapsed).toBeGreaterThanOrEqual(950);
      // One timeout, not one per retry: timed-out requests are not retried. Counted by the
      // connections the server saw (a retry opens another), not timed, so a busy CI cannot flake it.
      expect(sockets.size).toBe(1);
    } finally {
      await index.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("search and vectorSearch fail with unavailable when nothing listens", async () => {
    const index = new ElasticsearchSearchIndex({ node: "http://127.0.0.1:1", maxRetries: 0 });
    try {
      const vectorErr = await failureOf(
        index.vectorSearch({
          userId: "u",
          slot: "local",
          space: "local:test",
          vector: axisVector(100),
          limit: 5,
        }),
      );
      expect(vectorErr).toBeInstanceOf(LocusError);
      expect(vectorErr).toMatchObject({ code: "unavailable", status: 503 });
      const searchErr = await failureOf(index.search({ userId: "u", text: "revenue", limit: 5 }));
      expect(searchErr).toBeInstanceOf(LocusError);
      expect(searchErr).toMatchObject({ code: "unavailable", status: 503 });
    } finally {
      await index.close();
    }
  });

  it("check() fails with unavailable at once when nothing listens (a readiness probe does not wait)", async () => {
    const index = new ElasticsearchSearchIndex({ node: "http://127.0.0.1:1" });
    try {
      const started = Date.now();
      await expect(index.check()).rejects.toMatchObject({ code: "unavailable" });
      // A refused connection answers at once: a bound generous for a busy CI, and half the 10 s
      // request timeout it must not wait out.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await index.close();
    }
  });
});
