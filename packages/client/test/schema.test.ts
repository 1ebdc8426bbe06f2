import { readFileSync } from "node:fs";
import { GENERATE_COMMAND, generateSchema, SCHEMA_FILE } from "../scripts/generate-schema.ts";

describe("the generated API types", () => {
  it("match what /openapi.json generates today", async () => {
    const fresh = await generateSchema();
    const checkedIn = readFileSync(SCHEMA_FILE, "utf8");
    if (checkedIn !== fresh) {
      throw new Error(
        `packages/client/src/schema.ts is out of date with the API (services/gateway/src/openapi.ts): run \`${GENERATE_COMMAND}\` and commit the result.`,
      );
    }
    // The file really is the API's: its operations are there.
    expect(checkedIn).toContain('"/api/files/upload"');
  });
});
