import { getFile, listFilePassages, listFiles, search } from "../src/operations/files.ts";
import { parseRequest } from "../src/operations/operation.ts";
import { parseUuid, RequestValidationError } from "../src/operations/rules.ts";

/** The checks of each operation's declaration, applied to one place of a request. */
const parseSearchParams = (query: Record<string, unknown>) => {
  const { q, limit, mode, offset } = parseRequest(search, { query });
  return { q, limit, mode, offset };
};
const parseListParams = (query: Record<string, unknown>) => {
  const { limit, cursor } = parseRequest(listFiles, { query });
  return { limit, cursor };
};
const parseFileId = (file_id: string) => parseRequest(getFile, { params: { file_id } }).file_id;

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    if (err instanceof RequestValidationError) return err.issues;
    throw err;
  }
  throw new Error("expected a validation error");
}

describe("search parameters (pydantic v2 wording)", () => {
  it("reports a missing q", () => {
    expect(issuesOf(() => parseSearchParams({}))).toEqual([
      { type: "missing", loc: ["query", "q"], msg: "Field required", input: null },
    ]);
  });

  it("reports an empty q with its context", () => {
    expect(issuesOf(() => parseSearchParams({ q: "" }))).toEqual([
      {
        type: "string_too_short",
        loc: ["query", "q"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
    ]);
  });

  it("caps q at 1000 characters", () => {
    const [issue] = issuesOf(() => parseSearchParams({ q: "x".repeat(1001) }));
    expect(issue).toMatchObject({
      type: "string_too_long",
      msg: "String should have at most 1000 characters",
      ctx: { max_length: 1000 },
    });
    expect(parseSearchParams({ q: "x".repeat(1000) }).q).toHaveLength(1000);
  });

  it("reports every bad parameter at once, in declaration order", () => {
    expect(issuesOf(() => parseSearchParams({ limit: "abc", mode: "fast" }))).toEqual([
      { type: "missing", loc: ["query", "q"], msg: "Field required", input: null },
      {
        type: "int_parsing",
        loc: ["query", "limit"],
        msg: "Input should be a valid integer, unable to parse string as an integer",
        input: "abc",
      },
      {
        type: "literal_error",
        loc: ["query", "mode"],
        msg: "Input should be 'quick' or 'ai'",
        input: "fast",
        ctx: { expected: "'quick' or 'ai'" },
      },
    ]);
  });

  it("bounds limit to 1..100 with the raw input echoed", () => {
    expect(issuesOf(() => parseSearchParams({ q: "a", limit: "0" }))).toEqual([
      {
        type: "greater_than_equal",
        loc: ["query", "limit"],
        msg: "Input should be greater than or equal to 1",
        input: "0",
        ctx: { ge: 1 },
      },
    ]);
    expect(issuesOf(() => parseSearchParams({ q: "a", limit: "101" }))).toEqual([
      {
        type: "less_than_equal",
        loc: ["query", "limit"],
        msg: "Input should be less than or equal to 100",
        input: "101",
        ctx: { le: 100 },
      },
    ]);
  });

  it("parses integers as pydantic's lax mode does", () => {
    expect(parseSearchParams({ q: "a", limit: " 7 " }).limit).toBe(7);
    expect(parseSearchParams({ q: "a", limit: "1_0" }).limit).toBe(10);
    expect(parseSearchParams({ q: "a", limit: "5.0" }).limit).toBe(5);
    expect(issuesOf(() => parseSearchParams({ q: "a", limit: "5." }))[0]?.type).toBe("int_parsing");
    expect(issuesOf(() => parseSearchParams({ q: "a", limit: "5.5" }))[0]?.type).toBe("int_parsing");
  });

  it("applies defaults and takes the last of repeated values", () => {
    expect(parseSearchParams({ q: "a" })).toEqual({ q: "a", limit: 50, mode: "quick", offset: 0 });
    expect(parseSearchParams({ q: ["first", "second"], mode: "ai", offset: ["3", "7"] })).toEqual({
      q: "second",
      limit: 50,
      mode: "ai",
      offset: 7,
    });
  });

  it("checks the path first, then the query, each in declaration order", () => {
    const query = { limit: "0", offset: "-1" };
    expect(issuesOf(() => parseRequest(listFilePassages, { params: { file_id: "x" }, query }))).toHaveLength(
      1,
    );
    const params = { file_id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301" };
    const issues = issuesOf(() => parseRequest(listFilePassages, { params, query }));
    expect(issues.map((i) => [i.type, i.loc])).toEqual([
      ["greater_than_equal", ["query", "offset"]],
      ["greater_than_equal", ["query", "limit"]],
    ]);
    expect(parseRequest(listFilePassages, { params, query: {} })).toMatchObject({ offset: 0, limit: 100 });
  });

  it("bounds the file list's limit to 1..1000", () => {
    expect(parseListParams({})).toEqual({ limit: 1000, cursor: undefined });
    expect(issuesOf(() => parseListParams({ limit: "1001" }))[0]?.type).toBe("less_than_equal");
  });
});

describe("file_id (the uuid crate's messages, as pydantic-core reports them)", () => {
  const msgFor = (input: string) => issuesOf(() => parseFileId(input))[0]?.msg;

  it("accepts the forms pydantic accepts, normalised", () => {
    const id = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";
    expect(parseUuid(id.toUpperCase())).toBe(id);
    expect(parseUuid(id.replace(/-/g, ""))).toBe(id);
    expect(parseUuid(`{${id}}`)).toBe(id);
    expect(parseUuid(`urn:uuid:${id}`)).toBe(id);
  });

  it("names the first bad character, 1-based", () => {
    expect(msgFor("not-a-uuid")).toBe("Input should be a valid UUID, invalid character: found `n` at 1");
  });

  it("reports a wrong length, group count or group length", () => {
    expect(msgFor("abc123")).toBe(
      "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 6",
    );
    expect(msgFor("3f2504e0-4f89-11d3-9a0c")).toBe(
      "Input should be a valid UUID, invalid group count: expected 5, found 4",
    );
    expect(msgFor("3f2504e0-4f8-11d3-9a0c-0305e82c3301")).toBe(
      "Input should be a valid UUID, invalid group length in group 1: expected 4, found 3",
    );
  });

  it("returns the full pydantic issue", () => {
    expect(issuesOf(() => parseFileId("123"))).toEqual([
      {
        type: "uuid_parsing",
        loc: ["path", "file_id"],
        msg: "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3",
        input: "123",
        ctx: { error: "invalid length: expected length 32 for simple format, found 3" },
      },
    ]);
  });
});
