// File filters in Elasticsearch, against the vendor's mock answered by an in-memory engine that
// evaluates queries as Elasticsearch does (no cluster on this machine; the real-cluster suite runs
// the same contract where one is configured): the shared contract, filters included, and the exact
// clauses a filter becomes.

import { randomUUID } from "node:crypto";
import { ELASTICSEARCH_MAPPING_VERSION, passageIndexBody } from "../src/elasticsearch-search-index.ts";
import { searchIndexContract, streamOf, textPassage } from "./search-index.contract.ts";
import { ALIAS, QUERY_TYPES, clauseTypes, each, mockCluster } from "./elasticsearch-mock-cluster.ts";

const MOCK =
  "ElasticsearchSearchIndex against @elastic/elasticsearch-mock with an in-memory engine (no cluster on this machine)";

searchIndexContract(
  MOCK,
  () => {
    const cluster = mockCluster({ engine: true, aliasExists: false });
    const index = cluster.open({ localVectorDims: 4, indexPrefix: `locus-test-${randomUUID().slice(0, 8)}` });
    return Promise.resolve({ index, cleanup: () => index.close() });
  },
  {
    notOnUserStatistics:
      "Elasticsearch scores with its shard's statistics, every user's, and Lucene's idf (see bm25.ts)",
  },
);

describe(`${MOCK}: what a filter becomes`, () => {
  const attributes = {
    fileType: "pdf" as const,
    createdAt: "2024-01-10T12:00:00Z",
    metadata: { project: "apollo", year: 2024, draft: true, tags: ["red", "blue", "red"] },
  };
  const filter = {
    fileIds: ["f-1", "f-2", "f-1"],
    fileTypes: ["pdf" as const, "image" as const],
    createdAfter: "2024-01-01T00:00:00Z",
    createdBefore: "2024-02-01T00:00:00.000Z",
    metadata: { project: "apollo", year: "2024" },
  };
  const clauses = [
    { terms: { file_id: ["f-1", "f-2"] } },
    { terms: { file_type: ["pdf", "image"] } },
    { range: { file_created_at: { gt: "2024-01-01T00:00:00.000Z", lt: "2024-02-01T00:00:00.000Z" } } },
    { term: { "metadata.project": "apollo" } },
    { term: { "metadata.year": "2024" } },
  ];
  let cluster: ReturnType<typeof mockCluster>;
  beforeEach(() => {
    cluster = mockCluster({ engine: true, aliasExists: false });
  });

  it("stores the file's attributes on each passage: type, instant, metadata as filters compare it", async () => {
    const index = cluster.open();
    const file = { userId: "u-1", fileId: "f-1", attributes };
    await index.replaceFilePassages(file, streamOf([textPassage("one"), textPassage("two")]));
    expect(
      cluster.engine!.documents(ALIAS).map((d) => [d.ord, d.file_type, d.file_created_at, d.metadata]),
    ).toEqual(
      [0, 1].map((ord) => [
        ord,
        "pdf",
        "2024-01-10T12:00:00.000Z",
        { project: "apollo", year: "2024", draft: "true", tags: ["red", "blue"] },
      ]),
    );
    await index.close();
  });

  it("puts the filter in the keyword query's bool.filter, beside the user's term, scoring nothing", async () => {
    const index = cluster.open();
    await index.search({ userId: "u-1", text: "heron", limit: 5, filter });
    const search = cluster.calls().find((r) => r.path.endsWith("/_search"))!;
    expect((search.body as { query: { bool: { filter: unknown[] } } }).query.bool.filter).toEqual([
      { term: { user_id: "u-1" } },
      ...clauses,
    ]);
    await index.close();
  });

  it("puts the filter inside the kNN search (its filter), so `k` counts only passages that pass", async () => {
    const index = cluster.open();
    await index.vectorSearch({
      userId: "u-1",
      slot: "local",
      space: "s",
      vector: axis(100),
      limit: 5,
      filter,
    });
    const search = cluster.calls().find((r) => r.path.endsWith("/_search"))!;
    const body = search.body as {
      knn: { filter: unknown[]; k: number };
      query?: unknown;
      post_filter?: unknown;
    };
    expect(body.knn.filter).toEqual([
      { term: { user_id: "u-1" } },
      { term: { local_space: "s" } },
      ...clauses,
    ]);
    expect(body.knn.k).toBe(5);
    expect(body.query).toBeUndefined();
    expect(body.post_filter).toBeUndefined();
    await index.close();
  });

  it("keeps metadata keys and values as term values, whatever they hold", async () => {
    const index = cluster.open();
    const hostile = { metadata: { project: '"} OR *:* {"', note: "'; DROP TABLE passages; --" } };
    const file = { userId: "u-1", fileId: "f-1", attributes: { ...attributes, metadata: hostile.metadata } };
    await index.replaceFilePassages(file, streamOf([textPassage("heron")]));
    await index.replaceFilePassages(
      { userId: "u-1", fileId: "f-2", attributes },
      streamOf([textPassage("heron")]),
    );
    const hits = await index.search({ userId: "u-1", text: "heron", limit: 5, filter: hostile });
    expect(hits.map((h) => h.fileId)).toEqual(["f-1"]);
    const search = cluster.calls().filter((r) => r.path.endsWith("/_search"))[0]!;
    expect([...clauseTypes(search.body)].filter((k) => QUERY_TYPES.has(k)).sort()).toEqual([
      "bool",
      "match",
      "term",
    ]);
    await index.close();
  });

  it("an index of mapping version 3 (no attribute fields): the first refusal is retryable, then files index without attributes until the rebuild (mock cluster)", async () => {
    const { mappings } = passageIndexBody({ localVectorDims: 100 });
    const { file_type: _t, file_created_at: _c, metadata: _m, ...older } = mappings.properties!;
    const admin = cluster.client();
    await admin.indices.create({
      index: `${ALIAS}-v3`,
      mappings: { ...mappings, properties: { ...older, kind: { type: "keyword" } } },
      aliases: { [ALIAS]: {} },
    });
    const index = cluster.open();
    const write = () =>
      index.replaceFilePassages(
        { userId: "u-1", fileId: "f-1", attributes },
        streamOf([textPassage("heron")]),
      );
    // Refused once, as unavailable (the bus tries the file again), naming the rebuild.
    const refusal = write();
    await expect(refusal).rejects.toMatchObject({ code: "unavailable" });
    await expect(refusal).rejects.toThrow(/older mapping.*pnpm locus index rebuild/);
    // The retry, and every file after it, is written without the attributes: found unfiltered.
    await expect(write()).resolves.toBe(1);
    await index.replaceFilePassages({ userId: "u-1", fileId: "f-2" }, streamOf([textPassage("heron")]));
    const found = await index.search({ userId: "u-1", text: "heron", limit: 5 });
    expect(found.map((h) => h.fileId).sort()).toEqual(["f-1", "f-2"]);
    expect(
      await index.search({ userId: "u-1", text: "heron", limit: 5, filter: { fileTypes: ["pdf"] } }),
    ).toEqual([]);
    const result = await index.rebuild(
      each([
        { file: { userId: "u-1", fileId: "f-1", attributes }, passages: streamOf([textPassage("heron")]) },
      ]),
    );
    expect(result).toEqual({ files: 1, passages: 1 });
    const live = Object.keys(await admin.indices.getAlias({ name: ALIAS }));
    expect(live).toEqual([
      expect.stringMatching(new RegExp(`^${ALIAS}-v${ELASTICSEARCH_MAPPING_VERSION}-\\d+$`)),
    ]);
    expect(
      (await index.search({ userId: "u-1", text: "heron", limit: 5, filter: { fileTypes: ["pdf"] } })).map(
        (h) => h.fileId,
      ),
    ).toEqual(["f-1"]);
    await admin.close();
    await index.close();
  });

  it("an indexer that met the older mapping writes attributes again once another process's rebuild has moved the alias (mock cluster)", async () => {
    const { mappings } = passageIndexBody({ localVectorDims: 100 });
    const { file_type: _t, file_created_at: _c, metadata: _m, ...older } = mappings.properties!;
    const admin = cluster.client();
    await admin.indices.create({
      index: `${ALIAS}-v3`,
      mappings: { ...mappings, properties: { ...older, kind: { type: "keyword" } } },
      aliases: { [ALIAS]: {} },
    });
    const indexer = cluster.open({ mappingRecheckMs: 0 });
    const file = (fileId: string) => ({ userId: "u-1", fileId, attributes });
    await expect(
      indexer.replaceFilePassages(file("f-1"), streamOf([textPassage("heron")])),
    ).rejects.toMatchObject({
      code: "unavailable",
    });
    await indexer.replaceFilePassages(file("f-1"), streamOf([textPassage("heron")]));
    // `pnpm locus index rebuild` runs in a process of its own.
    const cli = cluster.open();
    await cli.rebuild(each([{ file: file("f-1"), passages: streamOf([textPassage("heron")]) }]));
    // The indexer sees the alias has moved: the next file goes in with its attributes.
    await indexer.replaceFilePassages(file("f-2"), streamOf([textPassage("heron")]));
    const filtered = await indexer.search({
      userId: "u-1",
      text: "heron",
      limit: 5,
      filter: { fileTypes: ["pdf"] },
    });
    expect(filtered.map((h) => h.fileId).sort()).toEqual(["f-1", "f-2"]);
    await admin.close();
  });
});

const axis = (dims: number) => {
  const v = new Float32Array(dims);
  v[0] = 1;
  return v;
};
