import { startSplitStack } from "@locus/testing";
import { describeApi, SUITE_ENV } from "./api-suite.ts";

// Separate processes on the machine's PostgreSQL, RabbitMQ and Redis and a signature-checking S3.
describeApi("split", () => startSplitStack({ env: SUITE_ENV }));

// The same suite with Elasticsearch as the passage index, when a cluster is reachable: named by
// ELASTICSEARCH_URL, or started by `pnpm test` with testcontainers where a Docker engine answers
// (scripts/test-services.mjs). CI here has neither; the skipped test below says why.
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
  const why = process.env.LOCUS_TEST_ELASTICSEARCH_ABSENT ?? "ELASTICSEARCH_URL is not set";
  describe("split, with Elasticsearch as the passage index", () => {
    it.skip(`runs the whole API suite on Elasticsearch (not run: ${why})`, () => undefined);
  });
}
