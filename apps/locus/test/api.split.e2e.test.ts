import { startSplitStack } from "@locus/testing";
import { describeApi, SUITE_ENV } from "./api-suite.ts";

// Separate processes on the machine's PostgreSQL, RabbitMQ and Redis and a signature-checking S3.
describeApi("split", () => startSplitStack({ env: SUITE_ENV }));

// The same suite with Elasticsearch as the passage index, when a cluster is reachable (CI has none).
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
}
