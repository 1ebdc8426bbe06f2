// A cluster without Elasticsearch's `reindex` module (as the distribution on Maven Central that
// tools/elasticsearch/start.sh runs): it has no `_delete_by_query`, and the adapter deletes by
// search and bulk delete instead. Against the vendor's mock answered by the in-memory engine, with
// `_delete_by_query` refused as such a cluster refuses it: the whole contract, then what is sent.

import { randomUUID } from "node:crypto";
import { searchIndexContract, streamOf, textPassage } from "./search-index.contract.ts";
import { ALIAS, file, mockCluster, noHandler, type Sent } from "./elasticsearch-mock-cluster.ts";

const MOCK =
  "ElasticsearchSearchIndex on a cluster without _delete_by_query (@elastic/elasticsearch-mock with an in-memory engine; no cluster on this machine)";

function clusterWithoutReindex() {
  const cluster = mockCluster({ engine: true, aliasExists: false });
  cluster.on((req: Sent) => (req.path.endsWith("/_delete_by_query") ? noHandler(req) : undefined));
  return cluster;
}

searchIndexContract(
  MOCK,
  () => {
    const index = clusterWithoutReindex().open({
      localVectorDims: 4,
      indexPrefix: `locus-test-${randomUUID().slice(0, 8)}`,
    });
    return Promise.resolve({ index, cleanup: () => index.close() });
  },
  {
    notOnUserStatistics:
      "Elasticsearch scores with its shard's statistics, every user's, and Lucene's idf (see bm25.ts)",
  },
);

describe(`${MOCK}: what it sends`, () => {
  it("asks for _delete_by_query once, then deletes the matching ids in the user's shard, in bulk", async () => {
    const cluster = clusterWithoutReindex();
    const index = cluster.open();
    try {
      const f = file("u-1", "f-1");
      const other = file("u-1", "f-2");
      const five = ["one", "two", "three", "four", "five"].map((w) => textPassage(w));
      await index.replaceFilePassages(f, streamOf(five));
      await index.replaceFilePassages(other, streamOf([textPassage("kept")]));
      await index.replaceFilePassages(f, streamOf(five.slice(0, 2)));
      expect(cluster.engine!.documents(ALIAS).map((d) => [d.file_id, d.ord])).toEqual([
        ["f-1", 0],
        ["f-1", 1],
        ["f-2", 0],
      ]);
      await index.deleteFilePassages(f);
      expect(cluster.engine!.documents(ALIAS).map((d) => d.file_id)).toEqual(["f-2"]);

      const deletes = cluster.sent.filter((r) => r.path.endsWith("/_delete_by_query"));
      expect(deletes).toHaveLength(1);
      const bulkDeletes = cluster.sent.filter(
        (r) => r.path.endsWith("/_bulk") && JSON.stringify(r.body).includes('"delete"'),
      );
      expect(bulkDeletes.map((r) => r.body)).toEqual([
        [2, 3, 4].map((ord) => ({ delete: { _id: `u-1:f-1:${ord}`, routing: "u-1" } })),
        [0, 1].map((ord) => ({ delete: { _id: `u-1:f-1:${ord}`, routing: "u-1" } })),
      ]);
      // The deletion that ends a call is seen by the next search.
      expect(bulkDeletes.map((r) => r.querystring.refresh)).toEqual(["false", "true"]);
    } finally {
      await index.close();
    }
  });
});
