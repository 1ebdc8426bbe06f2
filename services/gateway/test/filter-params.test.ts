import { keysetCursor } from "@locus/contracts";
import { RequestValidationError } from "@locus/http";
import type { Request, Response } from "express";
import { listFiles } from "../src/operations/files.ts";
import { parseRequest } from "../src/operations/operation.ts";
import { parseInstant } from "../src/operations/rules.ts";
import { setNextLink } from "../src/paging.ts";
import { parseMetadataField } from "../src/upload-metadata.ts";

/** The filter of the file list's (and search's) declaration. */
const parseFileFilter = (query: Record<string, unknown>) => parseRequest(listFiles, { query }).filter;

const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    if (err instanceof RequestValidationError) return err.issues;
    throw err;
  }
  throw new Error("expected a validation error");
};

describe("parseInstant", () => {
  it.each([
    ["2026-11-25", "2026-11-25T00:00:00.000Z"],
    ["2026-11-25T08:30:00Z", "2026-11-25T08:30:00.000Z"],
    ["2026-11-25T08:30", "2026-11-25T08:30:00.000Z"],
    ["2026-11-25 08:30:15.5", "2026-11-25T08:30:15.500Z"],
    ["2026-11-25T08:30:00+02:00", "2026-11-25T06:30:00.000Z"],
    ["2026-11-25T08:30:00-0130", "2026-11-25T10:00:00.000Z"],
    ["2026-11-25T08:30:00.123456789Z", "2026-11-25T08:30:00.123Z"],
  ])("reads %s as %s", (input, expected) => {
    expect(parseInstant(input)).toBe(expected);
  });

  it.each(["yesterday", "2026-02-30", "2026-13-01", "2026-11-25T24:00:00Z", "1700000000", ""])(
    "refuses %s",
    (input) => {
      expect(parseInstant(input)).toBeNull();
    },
  );
});

describe("parseFileFilter", () => {
  const id = "0b7e7a7e-6b0a-4c1e-9d3a-2f1c2b3a4d5e";

  it("is undefined when the query asks for nothing but the seed's parameters", () => {
    const cursor = keysetCursor({ at: "2026-01-01T00:00:00.000Z", id: "f1" });
    expect(parseFileFilter({ q: "x", limit: "5", mode: "ai", offset: "10", cursor })).toBeUndefined();
  });

  it("reads every condition, repeated ones as lists, UUIDs as pydantic does", () => {
    expect(
      parseFileFilter({
        file_id: [id.toUpperCase(), id.replace(/-/g, "")],
        file_type: ["pdf", "audio", "pdf"],
        created_after: "2026-01-01",
        created_before: "2026-02-01T00:00:00+01:00",
        "metadata.team": "search",
        "metadata.year": ["2023", "2024"],
      }),
    ).toEqual({
      fileIds: [id, id],
      fileTypes: ["pdf", "audio"],
      createdAfter: "2026-01-01T00:00:00.000Z",
      createdBefore: "2026-01-31T23:00:00.000Z",
      metadata: { team: "search", year: "2024" },
    });
  });

  it("lists every bad parameter at once, located as FastAPI locates them", () => {
    const issues = issuesOf(() =>
      parseFileFilter({
        file_id: [id, "nope"],
        file_type: "sheet",
        created_after: "soon",
        "metadata.9lives": "x",
        "metadata.empty": "",
        "metadata.__proto__": "x",
        "metadata.nul": "a\u0000b",
      }),
    );
    expect(issues.map((i) => [i.type, i.loc])).toEqual([
      ["uuid_parsing", ["query", "file_id", 1]],
      ["enum", ["query", "file_type", 0]],
      ["datetime_from_date_parsing", ["query", "created_after"]],
      ["string_pattern_mismatch", ["query", "metadata.9lives"]],
      ["string_too_short", ["query", "metadata.empty"]],
      // As a key of a plain object it would be the prototype: the filter would vanish.
      ["string_pattern_mismatch", ["query", "metadata.__proto__"]],
      // PostgreSQL's text cannot hold it.
      ["value_error", ["query", "metadata.nul"]],
    ]);
    expect(issues[1]?.msg).toBe("Input should be 'pdf', 'image', 'audio', 'video' or 'document'");
  });

  it("caps how many ids and metadata conditions one request may give", () => {
    const ids = Array.from({ length: 101 }, () => id);
    expect(issuesOf(() => parseFileFilter({ file_id: ids }))[0]).toMatchObject({
      type: "too_long",
      loc: ["query", "file_id"],
    });
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`metadata.k${i}`, "v"]));
    expect(issuesOf(() => parseFileFilter(many))[0]).toMatchObject({ type: "too_long" });
  });

  it("gives a next page's link the same limit and filter, the new cursor, and nothing else of the query", () => {
    const query = { limit: "2", cursor: "old", file_id: [id, id], "metadata.team": "a b", q: "x" };
    const headers: Record<string, string> = {};
    const req = { query, originalUrl: "/api/files?whatever" } as unknown as Request;
    const res = {
      setHeader: (name: string, value: string) => (headers[name] = value),
    } as unknown as Response;
    setNextLink(listFiles, req, res, "https://locus.test", "next");
    expect(headers).toEqual({
      Link: `<https://locus.test/api/files?limit=2&file_id=${id}&file_id=${id}&metadata.team=a+b&cursor=next>; rel="next"`,
    });
    // The last page has none.
    const none: Record<string, string> = {};
    const last = { setHeader: (name: string, value: string) => (none[name] = value) } as unknown as Response;
    setNextLink(listFiles, req, last, "https://locus.test", null);
    expect(none).toEqual({});
  });
});

describe("parseMetadataField", () => {
  it("accepts strings, numbers, booleans and lists of strings", () => {
    const metadata = { team: "search", year: 2024, ratio: 0.5, draft: false, tags: ["a", "b"], _x: "" };
    expect(parseMetadataField(JSON.stringify(metadata))).toEqual(metadata);
    expect(parseMetadataField("{}")).toEqual({});
  });

  it.each([
    ["{", "json_invalid", ["body", "metadata"]],
    ["null", "dict_type", ["body", "metadata"]],
    ["[1]", "dict_type", ["body", "metadata"]],
    ['{"a.b": 1}', "string_pattern_mismatch", ["body", "metadata", "a.b", "[key]"]],
    ['{"a": null}', "value_error", ["body", "metadata", "a"]],
    ['{"a": [1, 2]}', "value_error", ["body", "metadata", "a"]],
    ['{"a": {"b": 1}}', "value_error", ["body", "metadata", "a"]],
    [JSON.stringify({ a: "x".repeat(257) }), "value_error", ["body", "metadata", "a"]],
    [JSON.stringify({ a: Array.from({ length: 33 }, () => "x") }), "value_error", ["body", "metadata", "a"]],
    [JSON.stringify({ a: "x".repeat(5000) }), "string_too_long", ["body", "metadata"]],
    ['{"__proto__": "x"}', "string_pattern_mismatch", ["body", "metadata", "__proto__", "[key]"]],
    ['{"a": "nul\\u0000"}', "value_error", ["body", "metadata", "a"]],
    ['{"a": ["ok", "nul\\u0000"]}', "value_error", ["body", "metadata", "a"]],
    [
      JSON.stringify(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))),
      "too_long",
      ["body", "metadata"],
    ],
  ])("refuses %s with %s", (raw, type, loc) => {
    expect(issuesOf(() => parseMetadataField(raw))[0]).toMatchObject({ type, loc });
  });
});
