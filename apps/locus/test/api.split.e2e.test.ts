import { startSplitStack } from "@locus/testing";
import { describeApi, SUITE_ENV } from "./api-suite.ts";

// Separate processes on the machine's PostgreSQL, RabbitMQ and Redis and a signature-checking S3.
describeApi("split", () => startSplitStack({ env: SUITE_ENV }));
