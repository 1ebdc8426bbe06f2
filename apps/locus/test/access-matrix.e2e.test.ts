import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  REPO_ROOT,
  createUserWithKey,
  makePdf,
  removeDataDir,
  runCli,
  startLocus,
  waitForFile,
  client,
  type LocusProcess,
} from "@locus/testing";

/**
 * Who may do what: every operation of the interface × every kind of credential (none, malformed,
 * unknown, revoked, a test key, another user's live key, the owner's live key), each with the
 * status it must get, against one user's real file. Then preview links of a deleted file, and
 * the owner's file unchanged by everyone else's attempts.
 */
let locus: LocusProcess;
let ownerKey = "";
let ownerTestKey = "";
let otherKey = "";
let revokedKey = "";
let fileId = "";

beforeAll(async () => {
  locus = await startLocus({ env: { LOCUS_RATE_LIMIT_PRO: "10000", LOCUS_RATE_LIMIT_FREE: "10000" } });
  const owner = await createUserWithKey(locus.dataDir, { plan: "pro" });
  ownerKey = owner.key;
  ownerTestKey = (await createUserWithKey(locus.dataDir, { email: owner.email, type: "test" })).key;
  otherKey = (await createUserWithKey(locus.dataDir, { plan: "pro" })).key;
  revokedKey = (await createUserWithKey(locus.dataDir, { email: owner.email })).key;
  expect((await runCli(locus.dataDir, ["keys", "revoke", revokedKey])).code).toBe(0);
  const c = client(locus.baseUrl, ownerKey);
  const res = await c.upload(
    await makePdf({ pages: [["The owner's private ledger mentions a zebra."]] }),
    "ledger.pdf",
  );
  fileId = ((await res.json()) as { file: { id: string } }).file.id;
  await waitForFile(c, fileId);
}, 180_000);

/** Cases that got the status they must: the figure for test-artifacts/resilience/access-matrix.json. */
let held = 0;

afterAll(async () => {
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
  const dir = join(REPO_ROOT, "test-artifacts", "resilience");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "access-matrix.json"),
    `${JSON.stringify(
      {
        operations: OPERATIONS.map((o) => o.name),
        credentials: CREDENTIALS,
        cases: matrix.length,
        held,
        cases_list: matrix.map(([name, credential, status]) => `${name} with ${credential} → ${status}`),
      },
      null,
      2,
    )}\n`,
  );
});

type Credential = "none" | "malformed" | "unknown" | "revoked" | "test" | "other user" | "owner";
const CREDENTIALS: Credential[] = ["none", "malformed", "unknown", "revoked", "test", "other user", "owner"];

function authorization(credential: Credential): string | undefined {
  switch (credential) {
    case "none":
      return undefined;
    case "malformed":
      return "Bearer not-a-locus-key";
    case "unknown":
      return `Bearer sk_live_${randomBytes(24).toString("base64url")}`;
    case "revoked":
      return `Bearer ${revokedKey}`;
    case "test":
      return `Bearer ${ownerTestKey}`;
    case "other user":
      return `Bearer ${otherKey}`;
    case "owner":
      return `Bearer ${ownerKey}`;
  }
}

interface Operation {
  name: string;
  method: string;
  path: () => string;
  body?: () => Promise<FormData>;
  /** The status each credential must get (401 for every credential not listed). */
  expect: Partial<Record<Credential, number>>;
  /** What the body must (not) show for a credential that gets through. */
  check?: (credential: Credential, body: unknown) => void;
}

const upload = async () => {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(await makePdf({ pages: [["Another page."]] }))]), "other.pdf");
  return form;
};

const OPERATIONS: Operation[] = [
  {
    name: "search",
    method: "GET",
    path: () => "/api/search?q=zebra%20ledger",
    expect: { test: 200, "other user": 200, owner: 200 },
    check: (credential, body) => {
      const ids = (body as { results: { file_id: string }[] }).results.map((r) => r.file_id);
      expect(ids.includes(fileId)).toBe(credential === "owner");
    },
  },
  {
    name: "list files",
    method: "GET",
    path: () => "/api/files",
    expect: { test: 200, "other user": 200, owner: 200 },
    check: (credential, body) => {
      const ids = (body as { id: string }[]).map((f) => f.id);
      expect(ids.includes(fileId)).toBe(credential === "owner");
    },
  },
  {
    name: "read a file",
    method: "GET",
    path: () => `/api/files/${fileId}`,
    // A test key gets the sandbox's mock record (never the real one); another user, a 404.
    expect: { test: 200, "other user": 404, owner: 200 },
    check: (credential, body) => {
      const record = body as { original_name: string; sandbox?: boolean };
      if (credential === "test")
        expect(record).toMatchObject({ sandbox: true, original_name: "sandbox-example.pdf" });
      if (credential === "owner") expect(record.original_name).toBe("ledger.pdf");
    },
  },
  {
    name: "preview link",
    method: "GET",
    path: () => `/api/files/${fileId}/preview-url`,
    expect: { test: 200, "other user": 404, owner: 200 },
    check: (credential, body) => {
      const url = (body as { url: string }).url;
      if (credential === "test") expect(url).toMatch(/\/previews\/sandbox$/);
    },
  },
  {
    name: "upload",
    method: "POST",
    path: () => "/api/files/upload",
    body: upload,
    expect: { test: 200, "other user": 200, owner: 200 },
  },
  {
    // Last: the owner's delete removes the file for good.
    name: "delete a file",
    method: "DELETE",
    path: () => `/api/files/${fileId}`,
    expect: { test: 200, "other user": 404, owner: 200 },
    check: (credential, body) => {
      if (credential === "test") expect(body).toMatchObject({ sandbox: true });
    },
  },
];

const matrix = OPERATIONS.flatMap((operation) =>
  CREDENTIALS.map((credential) => [operation.name, credential, operation.expect[credential] ?? 401] as const),
);

describe("every operation × every credential", () => {
  it.each(matrix)("%s with %s credentials → %i", async (name, credential, status) => {
    const operation = OPERATIONS.find((o) => o.name === name)!;
    const headers: Record<string, string> = {};
    const auth = authorization(credential);
    if (auth) headers.Authorization = auth;
    const res = await fetch(`${locus.baseUrl}${operation.path()}`, {
      method: operation.method,
      headers,
      body: operation.body ? await operation.body() : undefined,
    });
    const body = (await res.json()) as unknown;
    expect(res.status).toBe(status);
    if (status === 401) {
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="locus"/);
      expect(body).toEqual({ detail: expect.any(String) });
    }
    if (status === 200) operation.check?.(credential, body);
    held++;
  });
});

it("after the owner's delete, the file, its preview link and its passages are gone for everyone", async () => {
  const owner = client(locus.baseUrl, ownerKey);
  expect((await owner.get(`/api/files/${fileId}`)).status).toBe(404);
  const search = (await (await owner.get("/api/search?q=zebra")).json()) as { results: unknown[] };
  expect(search.results).toEqual([]);
});

it("a preview link handed out before a delete stops working after it", async () => {
  const owner = client(locus.baseUrl, ownerKey);
  const res = await owner.upload(await makePdf({ pages: [["Short-lived page."]] }), "short.pdf");
  const { file } = (await res.json()) as { file: { id: string } };
  await waitForFile(owner, file.id);
  const { url } = (await (await owner.get(`/api/files/${file.id}/preview-url`)).json()) as { url: string };
  expect((await fetch(url)).status).toBe(200);
  expect((await owner.del(`/api/files/${file.id}`)).status).toBe(200);
  const after = await fetch(url);
  expect(after.status).toBe(404);
  expect(await after.json()).toEqual({ detail: "File not found" });
}, 60_000);
