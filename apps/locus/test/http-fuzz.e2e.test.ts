import { mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import {
  client,
  createUserWithKey,
  makePdf,
  REPO_ROOT,
  removeDataDir,
  seededRandom,
  startLocus,
  waitForFile,
  type LocusProcess,
} from "@locus/testing";

/**
 * Hostile HTTP: a generated fuzzer over every operation of /openapi.json (random and malformed
 * paths, queries, headers, methods and bodies, with no key, bad keys, a live key and a test key),
 * then requests that are not valid HTTP at all, on a raw socket. Every answer must come within
 * 10 s, never be a 5xx, and carry a JSON error body whenever it is an error; afterwards the server
 * is healthy and a real upload and search still work. The figures go to
 * test-artifacts/resilience/http-fuzz.json.
 */
const SEED = 20261123;
/** 3,000 in every `pnpm test`; `pnpm test:resilience` sends 10,000 (LOCUS_FUZZ_REQUESTS). */
const REQUESTS = Number(process.env.LOCUS_FUZZ_REQUESTS ?? 3000);
const TIMEOUT_MS = 10_000;

const random = seededRandom(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (p: number) => random() < p;

const NASTY_STRINGS = [
  "",
  " ",
  "0",
  "-1",
  "1e309",
  "NaN",
  "null",
  "true",
  "[]",
  "{}",
  "%00",
  "%ff%fe",
  "%",
  "%%",
  "..",
  "../../etc/passwd",
  "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
  "file_sandbox_example",
  "00000000-0000-0000-0000-000000000000",
  "6F9619FF-8B86-D011-B42D-00C04FC964FF",
  "'; DROP TABLE files; --",
  '"><script>alert(1)</script>',
  "${jndi:ldap://x}",
  "\u202e\u0000\u0007",
  "🦓".repeat(40),
  "a".repeat(5000),
  "ａｒｅ full width",
  "quick",
  "ai",
  "50",
  "101",
  "2147483648",
];

const encode = (s: string) => (chance(0.5) ? encodeURIComponent(s) : s.replace(/[ #?]/g, encodeURIComponent));

interface Operation {
  method: string;
  path: string;
}

interface Outcome {
  status: number;
  ms: number;
  json: boolean;
  detail: boolean;
}

let locus: LocusProcess;
let liveKey = "";
let testKey = "";
let operations: Operation[] = [];
const outcomes: Outcome[] = [];
const problems: string[] = [];

beforeAll(async () => {
  locus = await startLocus({
    env: { LOCUS_MAX_UPLOAD_BYTES: "200000", LOCUS_RATE_LIMIT_PRO: "100000", LOCUS_QUOTA_PRO: "0" },
  });
  liveKey = (await createUserWithKey(locus.dataDir, { plan: "pro" })).key;
  const { email } = await createUserWithKey(locus.dataDir, { plan: "pro" });
  testKey = (await createUserWithKey(locus.dataDir, { email, type: "test" })).key;
  const doc = (await (await fetch(`${locus.baseUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
  );
}, 180_000);

afterAll(async () => {
  const byStatus: Record<string, number> = {};
  for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
  const dir = join(REPO_ROOT, "test-artifacts", "resilience");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "http-fuzz.json"),
    `${JSON.stringify(
      {
        seed: SEED,
        operations: operations.map((o) => `${o.method} ${o.path}`),
        requests: outcomes.length,
        byStatus,
        slowestMs: Math.round(Math.max(0, ...outcomes.map((o) => o.ms))),
        problems,
      },
      null,
      2,
    )}\n`,
  );
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
});

function authorization(): string | undefined {
  return pick([
    undefined,
    `Bearer ${liveKey}`,
    `Bearer ${liveKey}`,
    `Bearer ${testKey}`,
    "Bearer",
    "Bearer ",
    `Bearer ${liveKey.slice(0, -1)}x`,
    `bearer ${liveKey}`,
    `Basic ${Buffer.from("user:pass").toString("base64")}`,
    `Bearer ${"sk_live_".padEnd(4000, "A")}`,
    `Bearer ${liveKey} ${liveKey}`,
    `Bearer sk_test_${"z".repeat(32)}`,
  ]);
}

function fuzzedPath(template: string): string {
  let path = template.replace(/\{[^}]+\}/g, () => encode(pick(NASTY_STRINGS)));
  if (chance(0.1)) path += pick(["/", "//", "/extra", "/..", "%2F", "?", "#frag", ";x=1"]);
  if (chance(0.05)) path = path.replace("/api", pick(["/API", "/api/", "//api", "/api%2F"]));
  const query: string[] = [];
  const keys = ["q", "limit", "mode", "cursor", "file_id", pick(NASTY_STRINGS), "q"];
  for (let i = 0; i < Math.floor(random() * 5); i++) {
    query.push(`${encode(pick(keys))}=${encode(pick(NASTY_STRINGS))}`);
  }
  if (template === "/api/search" && chance(0.6)) query.push(`q=${encode(pick(NASTY_STRINGS) || "x")}`);
  return query.length > 0 ? `${path}?${query.join("&")}` : path;
}

async function fuzzedBody(): Promise<{ body?: BodyInit; contentType?: string }> {
  switch (Math.floor(random() * 8)) {
    case 0:
      return {};
    case 1: {
      const form = new FormData();
      form.append(
        "file",
        new Blob([new Uint8Array(await makePdf({ pages: [["Fuzzed page."]] }))]),
        pick(NASTY_STRINGS) || "x.pdf",
      );
      return { body: form };
    }
    case 2: {
      const form = new FormData();
      form.append(pick(["file", "files", "upload", ""]), pick(NASTY_STRINGS));
      return { body: form };
    }
    case 3: {
      const form = new FormData();
      const bytes = new Uint8Array(Math.floor(random() * 300_000));
      for (let i = 0; i < bytes.length; i += 997) bytes[i] = Math.floor(random() * 256);
      form.append("file", new Blob([bytes]), "noise.bin");
      return { body: form };
    }
    case 4:
      return {
        body: `--boundary\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4 trunc`,
        contentType: "multipart/form-data; boundary=boundary",
      };
    case 5:
      return { body: "--nope\r\n\r\n", contentType: "multipart/form-data" };
    case 6:
      return { body: JSON.stringify({ file: "x", q: pick(NASTY_STRINGS) }), contentType: "application/json" };
    default:
      return {
        body: "x".repeat(Math.floor(random() * 50_000)),
        contentType: pick(["text/plain", "application/octet-stream", "💥/💥"]),
      };
  }
}

/**
 * Header values as the bytes a raw client would send: UTF-8, each byte one character, without the
 * control characters fetch refuses to send (the raw-socket cases below send those).
 */
const byteString = (value: string) =>
  Buffer.from(value, "utf8")
    .toString("latin1")
    // eslint-disable-next-line no-control-regex -- removing control characters is the point
    .replace(/[\x00-\x1f\x7f]/g, "");

async function send(method: string, path: string, headers: Record<string, string>, body?: BodyInit) {
  for (const name of Object.keys(headers)) headers[name] = byteString(headers[name] ?? "");
  const started = performance.now();
  const res = await fetch(`${locus.baseUrl}${path}`, {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : body,
    redirect: "manual",
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  let json = false;
  let detail = false;
  try {
    const parsed = JSON.parse(text) as { detail?: unknown };
    json = true;
    detail = parsed !== null && typeof parsed === "object" && "detail" in parsed;
  } catch {
    // not JSON
  }
  const outcome = { status: res.status, ms, json, detail };
  outcomes.push(outcome);
  const where = `${method} ${path.slice(0, 120)}`;
  if (res.status >= 500) problems.push(`${res.status} for ${where}: ${text.slice(0, 200)}`);
  else if (res.status >= 400 && method !== "HEAD" && !detail) {
    problems.push(`${res.status} without a JSON detail for ${where}: ${text.slice(0, 120)}`);
  }
  return outcome;
}

it(
  `answers ${REQUESTS} fuzzed requests over every operation: no 5xx, no hang, a JSON error body each time`,
  async () => {
    const methods = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"];
    for (let i = 0; i < REQUESTS; i++) {
      const operation = pick(operations);
      const method = chance(0.8) ? operation.method : pick(methods);
      const headers: Record<string, string> = {};
      const auth = authorization();
      if (auth !== undefined) headers.Authorization = auth;
      if (chance(0.1)) headers["X-Forwarded-For"] = pick(NASTY_STRINGS).slice(0, 200) || "1.2.3.4";
      if (chance(0.1)) headers.Accept = pick(["text/html", "*/*", "application/xml", "💥"]);
      if (chance(0.05)) headers.Cookie = `locus_session=${pick(NASTY_STRINGS).slice(0, 300)}`;
      const { body, contentType } = await fuzzedBody();
      if (contentType) headers["Content-Type"] = contentType;
      await send(method, fuzzedPath(operation.path), headers, body);
    }
    expect(problems).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(REQUESTS);
  },
  Math.max(600_000, REQUESTS * 200),
);

/**
 * Bytes straight onto a socket, for what fetch would refuse to send; resolves with the reply (""
 * when the server closed or reset the connection without one). A connection that could not be
 * made at all (refused: no server) rejects: that is no answer to the bytes.
 */
function raw(bytes: string | Buffer): Promise<string> {
  const url = new URL(locus.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let connected = false;
    let failure: Error | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${TIMEOUT_MS} ms to ${JSON.stringify(String(bytes).slice(0, 80))}`));
    }, TIMEOUT_MS);
    socket.on("connect", () => (connected = true));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("close", () => {
      clearTimeout(timer);
      if (connected) resolve(Buffer.concat(chunks).toString("latin1"));
      else
        reject(
          new Error(`no connection to ${locus.baseUrl}: ${failure?.message ?? "closed before connecting"}`),
        );
    });
    // After connecting, a reset is the server closing on bytes that are not a request: acceptable.
    socket.on("error", (err) => (failure = err));
    socket.end(bytes);
  });
}

/**
 * The one reply to a request: a status in the 4xx and a JSON body, or a closed connection. Never a
 * second response after the first (a request cut short after its answer).
 */
it.each([
  ["a request line that is not HTTP", "GARBAGE\r\n\r\n"],
  ["an unknown HTTP version", "GET /api/files HTTP/9.9\r\nHost: x\r\n\r\n"],
  ["a header without a colon", "GET /api/files HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n"],
  ["headers of 40 KB", `GET /api/files HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`],
  ["a URL of 40 KB", `GET /api/search?q=${"a".repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
  [
    "a body shorter than its Content-Length",
    "POST /api/files/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000\r\n\r\n--b\r\n",
  ],
  [
    "broken chunked encoding",
    "POST /api/files/upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nhello\r\n0\r\n\r\n",
  ],
  [
    "both Content-Length and chunked",
    "POST /api/files/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
  ],
  ["a NUL in the path", "GET /api/files/\u0000 HTTP/1.1\r\nHost: x\r\n\r\n"],
])("answers %s with a 4xx and a JSON body, or closes, without a 5xx", async (_label, request) => {
  const reply = await raw(request);
  if (reply === "") return; // the connection closed: acceptable for bytes that are not a request
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1]);
  outcomes.push({ status, ms: 0, json: true, detail: true });
  expect(status).toBeGreaterThanOrEqual(400);
  expect(status).toBeLessThan(500);
  expect(reply.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
  const body = reply.slice(reply.indexOf("\r\n\r\n") + 4);
  expect(JSON.parse(body)).toEqual({ detail: expect.any(String) });
});

it("is healthy afterwards: a real upload is read and found", async () => {
  expect((await fetch(`${locus.baseUrl}/healthz`)).status).toBe(200);
  const c = client(locus.baseUrl, liveKey);
  const res = await c.upload(
    await makePdf({ pages: [["After the storm, the kingfisher returned."]] }),
    "after.pdf",
  );
  const { file } = (await res.json()) as { file: { id: string } };
  expect(await waitForFile(c, file.id)).toMatchObject({ status: "ready" });
  const search = (await (await c.get("/api/search?q=kingfisher")).json()) as {
    results: { file_id: string }[];
  };
  expect(search.results.map((r) => r.file_id)).toContain(file.id);
}, 60_000);
