import { startLocus } from "@locus/testing";
import { describeApi, SUITE_ENV } from "./api-suite.ts";

describeApi("all-in-one", () => startLocus({ env: SUITE_ENV }));
