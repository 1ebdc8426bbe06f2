import { startSplitStack } from "@locus/testing";
import { describeApi, SUITE_ENV } from "./api-suite.ts";

// The whole API suite in the split shape as the design deploys it: separate processes on the
// machine's PostgreSQL, RabbitMQ and Redis, a signature-checking S3, and Elasticsearch as the
// passage index. The node is named by ELASTICSEARCH_URL: the machine's (.ci/services.sh starts one,
// tools/elasticsearch/start.sh), or a container `pnpm test` starts where a Docker engine answers
// (scripts/test-services.mjs). The split shape on PostgreSQL's full-text index runs in
// split.e2e.test.ts, and each index's adapter in its contract suite.
const elasticsearch = process.env.ELASTICSEARCH_URL;
if (elasticsearch) {
  describeApi(
    "split",
    () =>
      startSplitStack({
        env: {
          ...SUITE_ENV,
          LOCUS_SEARCH_INDEX: "elasticsearch",
          ELASTICSEARCH_URL: elasticsearch,
          LOCUS_ES_INDEX_PREFIX: `locus-test-${Date.now()}`,
        },
      }),
    `split, with Elasticsearch at ${new URL(elasticsearch).host}`,
  );
} else {
  // Without a node the suite still runs, on PostgreSQL's index, and the skip below fails the run
  // (scripts/allowed-skips.json does not list it): Elasticsearch is the shape this suite is for.
  describeApi("split", () => startSplitStack({ env: SUITE_ENV }));
  const why = process.env.LOCUS_TEST_ELASTICSEARCH_ABSENT ?? "ELASTICSEARCH_URL is not set";
  describe("split, with Elasticsearch as the passage index", () => {
    it.skip(`runs the whole API suite on Elasticsearch (not run: ${why})`, () => undefined);
  });
}
