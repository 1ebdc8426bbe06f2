// Vector search, against the vendor's mock: the kNN request sent, and how hits and failures come back.
import { errors } from "@elastic/elasticsearch";
import { LocusError } from "@locus/contracts";
import { ElasticsearchSearchIndex } from "../src/elasticsearch-search-index.ts";
import { vectorSearchBody } from "../src/elasticsearch-queries.ts";
import type { VectorQuery } from "../src/search-index.ts";
import {
  ALIAS,
  QUERY_TYPES,
  V1,
  axisVector,
  clauseTypes,
  failureOf,
  responseError,
  useMockCluster,
  vectorSearchRequest,
} from "./elasticsearch-mock-cluster.ts";

describe("ElasticsearchSearchIndex against @elastic/elasticsearch-mock (no cluster on this machine)", () => {
  const { cluster, open, opened } = useMockCluster();

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
});
