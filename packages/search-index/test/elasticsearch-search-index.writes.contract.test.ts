// Writing and deleting passages, against the vendor's mock: bulk requests, their retries, deletes by query.
import { LocusError, type ExtractedPassage } from "@locus/contracts";
import { MAX_TERM_LENGTH } from "@locus/passages";
import type { IndexedPassage } from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";
import {
  ALIAS,
  V1,
  actionsOf,
  axisVector,
  bulkPair,
  failureOf,
  file,
  responseError,
  useMockCluster,
  withVectors,
} from "./elasticsearch-mock-cluster.ts";

describe("ElasticsearchSearchIndex against @elastic/elasticsearch-mock (no cluster on this machine)", () => {
  const { cluster, open } = useMockCluster();

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

    it("leaves out a vector of another size than its slot's mapping (the word vectors' where the encoder's are mapped)", async () => {
      const f = file();
      const passages: IndexedPassage[] = [
        withVectors(textPassage("encoder vector"), {
          local: { space: "all-MiniLM-L6-v2", vector: axisVector(384, 1) },
        }),
        withVectors(textPassage("word vector"), {
          local: { space: "local:wink-sg-100d:sif-0.001", vector: axisVector(100, 1) },
        }),
      ];
      expect(await open({ localVectorDims: 384 }).replaceFilePassages(f, streamOf(passages))).toBe(2);
      const bulk = cluster.calls().find((r) => r.path.endsWith("/_bulk"))!;
      const documents = (bulk.body as Array<Record<string, unknown>>).filter((_, i) => i % 2 === 1);
      expect(documents.map((d) => (d.local_vector as unknown[] | undefined)?.length)).toEqual([
        384,
        undefined,
      ]);
      expect(documents.map((d) => d.local_space)).toEqual(["all-MiniLM-L6-v2", undefined]);
    });

    it("says to rebuild when the index behind the alias was made for another engine's vectors", async () => {
      cluster.on((req) => {
        if (!req.path.endsWith("/_bulk")) return undefined;
        return {
          took: 1,
          errors: true,
          items: actionsOf(req).map((a) => ({
            index: {
              _index: V1,
              _id: a.index._id,
              status: 400,
              error: {
                type: "document_parsing_exception",
                reason: `The [dense_vector] field [local_vector] in doc [document with id '${a.index._id}'] has a different number of dimensions [384] than defined in the mapping [100]`,
              },
            },
          })),
        };
      });
      const passage = withVectors(textPassage("encoder vector"), {
        local: { space: "all-MiniLM-L6-v2", vector: axisVector(384, 1) },
      });
      const err = await failureOf(
        open({ localVectorDims: 384 }).replaceFilePassages(file(), streamOf([passage])),
      );
      expect((err as Error).message).toMatch(
        /different number of dimensions \[384\] than defined in the mapping \[100\] \(the index behind .+ was made for vectors of another engine: run `pnpm locus index rebuild`\)$/,
      );
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
});
