import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createLocusClient,
  LocusApiError,
  LocusTimeoutError,
  retryAfterMs,
  serializeQuery,
} from "../src/index.ts";

/**
 * The client's 429 handling against a real local HTTP server that refuses first (Locus's own rate
 * limiter is exercised by test/sdk.e2e.test.ts): what it waits, what it sends again, what it throws.
 */

interface Seen {
  at: number;
  url: string;
  body: Buffer;
}

let server: Server;
let baseUrl: string;
let seen: Seen[];
/** Answers the n-th request (0-based) of a test. */
let answer: (n: number, res: ServerResponse) => void;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ at: Date.now(), url: req.url ?? "", body: Buffer.concat(chunks) });
      answer(seen.length - 1, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections(); // close alone waits for every open connection to end
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const refuse = (res: ServerResponse, retryAfter: string) =>
  json(res, 429, { detail: "Rate limit exceeded" }, { "Retry-After": retryAfter });
const FILE = { id: "6f1c0000-0000-4000-8000-000000000000", status: "ready", original_name: "a.pdf" };

describe("Retry-After", () => {
  it("reads delay-seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("3", now)).toBe(3000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Thursday, 01-Jan-26 00:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Thu Jan  1 00:00:05 2026", now)).toBe(5000);
    expect(retryAfterMs("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("-1", now)).toBeNull();
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe("the client against a local server answering 429 first", () => {
  it("waits the seconds Retry-After asks for, then sends the request again", async () => {
    answer = (n, res) => (n === 0 ? refuse(res, "1") : json(res, 200, FILE));
    const retries: number[] = [];
    const client = createLocusClient({
      baseUrl,
      apiKey: "sk_live_x",
      onRetry: (e) => retries.push(e.waitMs),
    });
    const file = await client.getFile(FILE.id);
    expect(file.id).toBe(FILE.id);
    expect(retries).toEqual([1000]);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it("waits until the HTTP date Retry-After names", async () => {
    // Whole seconds: the date is 1 to 2 s away.
    const when = new Date(Math.ceil((Date.now() + 1000) / 1000) * 1000);
    answer = (n, res) =>
      n === 0 ? refuse(res, when.toUTCString()) : json(res, 200, { results: [], count: 0 });
    const client = createLocusClient({ baseUrl, apiKey: "sk_live_x" });
    await client.search("tea");
    expect(seen[1]!.at).toBeGreaterThanOrEqual(when.getTime() - 10);
  });

  it("sends an upload's whole body again after a 429, progress starting over", async () => {
    answer = (n, res) => (n === 0 ? refuse(res, "0") : json(res, 200, { file: FILE }));
    const bytes = Buffer.alloc(200 * 1024, 7);
    const progress: [number, number][] = [];
    const file = await createLocusClient({ baseUrl, apiKey: "sk_live_x" }).upload(bytes, {
      name: 'résumé "2".pdf',
      metadata: { team: "search" },
      onProgress: (sent, total) => progress.push([sent, total]),
    });
    expect(file.id).toBe(FILE.id);
    expect(seen).toHaveLength(2);
    for (const request of seen) {
      const text = request.body.toString("latin1");
      expect(request.body.length).toBeGreaterThan(bytes.length);
      // Metadata before the file; the name both as UTF-8 and RFC 5987.
      expect(text.indexOf('name="metadata"')).toBeLessThan(text.indexOf('name="file"'));
      expect(request.body.toString("utf8")).toContain(`filename="résumé %222%22.pdf"`);
      expect(text).toContain(`filename*=UTF-8''r%C3%A9sum%C3%A9%20%222%22.pdf`);
    }
    const total = bytes.length;
    const chunk = 64 * 1024;
    const once = [chunk, 2 * chunk, 3 * chunk, total].map((sent) => [sent, total]);
    expect(progress).toEqual([...once, ...once]);
  });

  it("throws the last 429, with its status, body and Retry-After, once maxRetries are spent", async () => {
    answer = (_n, res) => refuse(res, "0");
    const client = createLocusClient({ baseUrl, apiKey: "sk_live_x", maxRetries: 2 });
    const error = await client.getFile(FILE.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocusApiError);
    expect(error).toMatchObject({ status: 429, body: { detail: "Rate limit exceeded" }, retryAfterMs: 0 });
    expect(seen).toHaveLength(3);
  });

  it("does not wait longer than maxRetryDelayMs: a quota renewing in days is thrown at once", async () => {
    answer = (_n, res) => refuse(res, String(5 * 24 * 3600));
    const client = createLocusClient({ baseUrl, apiKey: "sk_live_x", maxRetryDelayMs: 10_000 });
    const error = (await client.search("tea").catch((e: unknown) => e)) as LocusApiError;
    expect(error.status).toBe(429);
    expect(error.retryAfterMs).toBe(5 * 24 * 3600 * 1000);
    expect(seen).toHaveLength(1);
  });

  it("carries a 422's FastAPI detail on the error", async () => {
    const detail = [
      { type: "greater_than_equal", loc: ["query", "limit"], msg: "Input should be >= 1", input: "0" },
    ];
    answer = (_n, res) => json(res, 422, { detail });
    const error = (await createLocusClient({ baseUrl, apiKey: "sk_live_x" })
      .search("tea", { limit: 0 })
      .catch((e: unknown) => e)) as LocusApiError;
    expect(error.status).toBe(422);
    expect(error.detail).toEqual(detail);
    expect(error.message).toBe("Locus answered 422: query.limit: Input should be >= 1");
  });

  it("sends parameters the generated types do not know yet", async () => {
    answer = (_n, res) => json(res, 200, { results: [], count: 0 });
    await createLocusClient({ baseUrl, apiKey: "sk_live_x" }).search("tea & cake", {
      limit: 5,
      file_id: ["a", "b"],
      metadata: { team: "search & ranking" },
      offset: 10,
    });
    const query = new URL(seen[0]!.url, baseUrl).searchParams;
    expect(query.get("q")).toBe("tea & cake");
    expect(query.getAll("file_id")).toEqual(["a", "b"]);
    expect(query.get("metadata.team")).toBe("search & ranking");
    expect(query.get("offset")).toBe("10");
    expect(serializeQuery({ a: undefined, b: null, c: true })).toBe("c=true");
  });

  it("waitUntilReady throws LocusTimeoutError, with the record last read, when the time is up", async () => {
    answer = (_n, res) => json(res, 200, { ...FILE, status: "processing" });
    const error = await createLocusClient({ baseUrl, apiKey: "sk_live_x" })
      .waitUntilReady(FILE.id, { timeoutMs: 300, pollIntervalMs: 100 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocusTimeoutError);
    expect((error as LocusTimeoutError).file.status).toBe("processing");
    expect(seen.length).toBeGreaterThanOrEqual(3);
  });
});
