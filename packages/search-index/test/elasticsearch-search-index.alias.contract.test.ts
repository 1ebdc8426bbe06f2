// The index behind the alias, against the vendor's mock: creating it, finding it gone, rebuilding it.
import { errors } from "@elastic/elasticsearch";
import { LocusError, type ExtractedPassage } from "@locus/contracts";
import {
  ELASTICSEARCH_MAPPING_VERSION,
  ElasticsearchSearchIndex,
  passageIndexBody,
} from "../src/elasticsearch-search-index.ts";
import type { FileRef } from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";
import {
  ALIAS,
  EXPECTED_MAPPINGS,
  EXPECTED_SETTINGS,
  EXPECTED_SIMILARITY,
  V1,
  axisVector,
  bulkPair,
  each,
  failureOf,
  file,
  responseError,
  useMockCluster,
  withVectors,
  type CreateBody,
} from "./elasticsearch-mock-cluster.ts";

describe("ElasticsearchSearchIndex against @elastic/elasticsearch-mock (no cluster on this machine)", () => {
  const { cluster, open } = useMockCluster();

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
