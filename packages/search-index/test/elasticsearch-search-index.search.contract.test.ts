// Term search and passagesInRanges, against the vendor's mock: the requests sent, and how hits and
// failures come back.
import {
  Client,
  errors,
  type ConnectionRequestOptions,
  type ConnectionRequestOptionsAsStream,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
  type ConnectionRequestResponseAsStream,
} from "@elastic/elasticsearch";
import { LocusError } from "@locus/contracts";
import { ElasticsearchSearchIndex } from "../src/elasticsearch-search-index.ts";
import { queryTerms } from "../src/search-index.ts";
import { HOSTILE_QUERIES } from "./search-index.contract.ts";
import {
  ALIAS,
  QUERY_TYPES,
  V1,
  clauseTypes,
  closable,
  failureOf,
  responseError,
  searchOf,
  searchRequest,
  useMockCluster,
} from "./elasticsearch-mock-cluster.ts";

describe("ElasticsearchSearchIndex against @elastic/elasticsearch-mock (no cluster on this machine)", () => {
  const { cluster, open, opened } = useMockCluster();

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
});
