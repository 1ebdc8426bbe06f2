import { keysetCursor } from "@locus/contracts";
import { RequestValidationError } from "@locus/http";
import { parseRequest } from "../src/operations/operation.ts";
import {
  createWebhook,
  getWebhook,
  listWebhookDeliveries,
  redeliverWebhook,
  updateWebhook,
} from "../src/operations/webhooks.ts";

const ID = "6f9619ff-8b86-d011-b42d-00c04fc964ff";
const parseWebhookCreate = (body: unknown) => parseRequest(createWebhook, { body }).body;
const parseWebhookChange = (body: unknown) =>
  parseRequest(updateWebhook, { params: { endpoint_id: ID }, body }).body;
const parseIdParam = (endpoint_id: string) =>
  parseRequest(getWebhook, { params: { endpoint_id } }).endpoint_id;
const parseDeliveriesQuery = (query: Record<string, unknown>) => {
  const { limit, cursor, before } = parseRequest(listWebhookDeliveries, {
    params: { endpoint_id: ID },
    query,
  });
  return { limit, cursor, before };
};

/** What each bad body or parameter of /api/webhooks is answered with: pydantic v2's issues. */
function issues(run: () => unknown) {
  try {
    run();
  } catch (err) {
    if (err instanceof RequestValidationError) return err.issues;
    throw err;
  }
  throw new Error("no validation error");
}

describe("webhook request validation", () => {
  it("takes a URL with every event by default, and the events given otherwise (once each)", () => {
    expect(parseWebhookCreate({ url: "https://x.example/h" })).toEqual({
      url: "https://x.example/h",
      events: ["file.ready", "file.failed", "file.deleted"],
      description: "",
    });
    expect(
      parseWebhookCreate({ url: "https://x.example/h", events: ["file.failed", "file.failed"], extra: 1 })
        .events,
    ).toEqual(["file.failed"]);
  });

  it("refuses a missing URL, wrong types, unknown events and an empty list as pydantic does", () => {
    expect(issues(() => parseWebhookCreate({ events: [], description: "x".repeat(501) }))).toEqual([
      {
        type: "missing",
        loc: ["body", "url"],
        msg: "Field required",
        input: { events: [], description: "x".repeat(501) },
      },
      {
        type: "too_short",
        loc: ["body", "events"],
        msg: "List should have at least 1 item after validation, not 0",
        input: [],
        ctx: { field_type: "List", min_length: 1, actual_length: 0 },
      },
      {
        type: "string_too_long",
        loc: ["body", "description"],
        msg: "String should have at most 500 characters",
        input: "x".repeat(501),
        ctx: { max_length: 500 },
      },
    ]);
    expect(issues(() => parseWebhookCreate({ url: 5, events: "file.ready" }))).toEqual([
      { type: "string_type", loc: ["body", "url"], msg: "Input should be a valid string", input: 5 },
      {
        type: "list_type",
        loc: ["body", "events"],
        msg: "Input should be a valid list",
        input: "file.ready",
      },
    ]);
    expect(
      issues(() => parseWebhookCreate({ url: "https://x", events: ["file.ready", 3] }))[0],
    ).toMatchObject({
      type: "literal_error",
      loc: ["body", "events", 1],
      msg: "Input should be 'file.ready', 'file.failed' or 'file.deleted'",
    });
    expect(issues(() => parseWebhookCreate([1]))[0]).toMatchObject({
      type: "model_attributes_type",
      loc: ["body"],
    });
    expect(issues(() => parseWebhookCreate(undefined))[0]).toMatchObject({ type: "missing", loc: ["body"] });
  });

  it("a change takes only what is given; enabled must be a boolean", () => {
    expect(parseWebhookChange({ enabled: true })).toEqual({ enabled: true });
    expect(parseWebhookChange({})).toEqual({});
    expect(issues(() => parseWebhookChange({ enabled: "yes" }))[0]).toMatchObject({
      type: "bool_type",
      loc: ["body", "enabled"],
    });
  });

  it("ids are UUIDs (any form pydantic takes), and the page size is 1 to 100", () => {
    expect(parseIdParam("6F9619FF8B86D011B42D00C04FC964FF")).toBe("6f9619ff-8b86-d011-b42d-00c04fc964ff");
    expect(issues(() => parseIdParam("nope"))[0]).toMatchObject({
      type: "uuid_parsing",
      loc: ["path", "endpoint_id"],
      msg: "Input should be a valid UUID, invalid character: found `n` at 1",
    });
    expect(parseDeliveriesQuery({})).toEqual({ limit: 20, cursor: undefined, before: undefined });
    const cursor = keysetCursor({ at: "2026-01-01T00:00:00.000Z", id: "d1" });
    expect(parseDeliveriesQuery({ limit: "5", cursor })).toEqual({ limit: 5, cursor, before: undefined });
    // `before` is the name the cursor had before the paging rule: still taken.
    expect(parseDeliveriesQuery({ before: cursor })).toMatchObject({ before: cursor });
    expect(issues(() => parseDeliveriesQuery({ cursor: "abc" }))[0]).toMatchObject({
      type: "value_error",
      loc: ["query", "cursor"],
    });
    expect(issues(() => parseDeliveriesQuery({ limit: "101" }))[0]).toMatchObject({
      type: "less_than_equal",
    });
    expect(issues(() => parseDeliveriesQuery({ limit: "x" }))[0]).toMatchObject({ type: "int_parsing" });
    // pydantic's lax integers, as every other integer parameter takes them.
    expect(parseDeliveriesQuery({ limit: " 1_0 " }).limit).toBe(10);
    expect(parseDeliveriesQuery({ limit: "5.0" }).limit).toBe(5);
  });

  it("reports every bad id in the path at once, as FastAPI does; a test key may name the sandbox's", () => {
    const params = { endpoint_id: "nope", delivery_id: "x" };
    expect(issues(() => parseRequest(redeliverWebhook, { params })).map((i) => i.loc)).toEqual([
      ["path", "endpoint_id"],
      ["path", "delivery_id"],
    ]);
    const sandboxIds = { endpoint_id: "whep_sandbox_example", delivery_id: "whdl_sandbox_example" };
    expect(parseRequest(redeliverWebhook, { params: sandboxIds }, true)).toMatchObject(sandboxIds);
    expect(issues(() => parseRequest(redeliverWebhook, { params: sandboxIds }))).toHaveLength(2);
  });
});
