import { readFileSync } from "node:fs";
import { getFile, search } from "../src/operations/files.ts";
import { parseRequest } from "../src/operations/operation.ts";
import { RequestValidationError, type ValidationIssue } from "../src/operations/rules.ts";

/**
 * Golden cases written by real pydantic (tools/pydantic-golden.py): every error Locus reports for
 * these inputs must be exactly pydantic's, with FastAPI's location added.
 */
interface GoldenCase {
  param: "q" | "limit" | "mode" | "file_id";
  input: string;
  errors: Omit<ValidationIssue, "loc">[];
}
const golden = JSON.parse(
  readFileSync(new URL("./fixtures/pydantic-errors.json", import.meta.url), "utf8"),
) as { pydantic: string; cases: GoldenCase[] };

function locusIssues(c: GoldenCase): ValidationIssue[] {
  try {
    if (c.param === "file_id") parseRequest(getFile, { params: { file_id: c.input } });
    else parseRequest(search, { query: { q: "x", [c.param]: c.input } });
    return [];
  } catch (err) {
    if (err instanceof RequestValidationError) return err.issues;
    throw err;
  }
}

describe(`422 bodies match pydantic ${golden.pydantic}`, () => {
  it.each(golden.cases.map((c) => [c.param, JSON.stringify(c.input).slice(0, 60), c] as const))(
    "%s = %s",
    (param, _shown, c) => {
      const where = param === "file_id" ? "path" : "query";
      const expected = c.errors.map((e) => ({ ...e, loc: [where, param] }));
      expect(locusIssues(c)).toEqual(expected);
    },
  );
});
