import { randomUUID } from "node:crypto";
import { Client } from "@elastic/elasticsearch";
import {
  ELASTICSEARCH_MAPPING_VERSION,
  ElasticsearchSearchIndex,
} from "../src/elasticsearch-search-index.ts";
import { searchIndexContract, streamOf, textPassage } from "./search-index.contract.ts";
import { each } from "./elasticsearch-mock-cluster.ts";

// ---------------------------------------------------------------------------------------------
// A real cluster, when one is configured (docker-compose has one): the shared contract suite, its
// file filters included (the mock engine's suite runs the same cases without a cluster).
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
    // The contract's vectors (its vector and filter cases) have 4 dimensions.
    return new ElasticsearchSearchIndex({
      node: ELASTICSEARCH_URL,
      indexPrefix,
      requestTimeoutMs: 30_000,
      localVectorDims: 4,
    });
  };

  let current: ElasticsearchSearchIndex | undefined;
  searchIndexContract(
    `ElasticsearchSearchIndex against Elasticsearch at ${host}`,
    async () => {
      const index = open();
      current = index;
      // Every write waits for the refresh that shows it (`refresh: wait_for`), and the contract
      // writes file after file: at the default interval (1 s) a filter case of eight files took 8 s.
      // The test node refreshes its indexes every 50 ms instead; what a write waits for is unchanged.
      await index.check();
      await admin.indices.putSettings({ index: index.aliasName, settings: { refresh_interval: "50ms" } });
      return {
        index,
        async cleanup() {
          await index.close();
          await dropIndexes(index.aliasName);
        },
      };
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
