import type { DashboardUsage } from "@locus/dashboard";
import {
  createUserWithKey,
  makePdf,
  recordResilience,
  removeDataDir,
  runCli,
  startLocus,
  waitForFile,
  client,
  type LocusProcess,
} from "@locus/testing";

/**
 * The dashboard's accounts over HTTP, against the real server: sign-up and sign-in rules,
 * sessions in cookies, CSRF, sign-in throttling, keys scoped to their owner, usage, and the CLI on
 * the same accounts. (The browser flow is dashboard.e2e.test.ts.)
 */
let locus: LocusProcess;
const PASSWORD = "several unrelated words";

beforeAll(async () => {
  // Every account here comes from 127.0.0.1: allow more than the default 10 sign-ups an hour.
  // The test is the proxy: it names the client's address in X-Forwarded-For where a test needs one.
  locus = await startLocus({
    env: {
      LOCUS_QUOTA_FREE: "3",
      LOCUS_RATE_LIMIT_FREE: "200",
      LOCUS_SIGNUPS_PER_HOUR: "1000",
      LOCUS_TRUST_PROXY: "loopback",
    },
  });
}, 180_000);

afterAll(async () => {
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
});

const newEmail = () => `acct-${Math.random().toString(36).slice(2)}@example.com`;

describe("the page's own files", () => {
  it("serves Locus's icon at /favicon.ico (what every browser asks any page's origin for) and as SVG", async () => {
    const ico = await fetch(`${locus.baseUrl}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get("content-type")).toBe("image/x-icon");
    const bytes = Buffer.from(await ico.arrayBuffer());
    // An ICO header (reserved 0, type 1, one image) holding a PNG.
    expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    expect(bytes.subarray(22, 26).toString("latin1")).toBe("\x89PNG");
    const svg = await fetch(`${locus.baseUrl}/dashboard/assets/favicon.svg`);
    expect(svg.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    const page = await (await fetch(`${locus.baseUrl}/dashboard`)).text();
    expect(page).toContain('<link rel="icon" href="/dashboard/assets/favicon.svg"');
  });
});

/** A browser-like client: keeps the session cookie and sends the CSRF token it was given. */
class Browser {
  cookie = "";
  csrf = "";

  /** The client's address, as the (trusted, loopback) proxy in front of Locus would say it. */
  constructor(readonly address?: string) {}

  async call(path: string, init: { method?: string; body?: unknown; csrf?: boolean | string } = {}) {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = init.csrf ?? true;
    if (csrf !== false && this.csrf) headers["x-csrf-token"] = csrf === true ? this.csrf : csrf;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    if (this.address) headers["x-forwarded-for"] = this.address;
    const res = await fetch(`${locus.baseUrl}${path}`, {
      method: init.method ?? "GET",
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0] ?? "";
    const text = await res.text();
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    if (body && typeof body.csrf === "string") this.csrf = body.csrf;
    return { status: res.status, body, headers: res.headers, setCookie: set };
  }

  signUp(email: string, password = PASSWORD) {
    return this.call("/dashboard/api/signup", { method: "POST", body: { email, password } });
  }

  signIn(email: string, password = PASSWORD) {
    return this.call("/dashboard/api/signin", { method: "POST", body: { email, password } });
  }
}

describe("signing up", () => {
  it("creates a free account, signs it in with an httpOnly, SameSite=Strict session cookie", async () => {
    const b = new Browser();
    const email = newEmail();
    const res = await b.signUp(email);
    expect(res.status).toBe(201);
    // Nothing this server cannot do: its speech engine is installed.
    expect(res.body).toEqual({ user: { email, plan: "free" }, csrf: expect.any(String), notices: [] });
    expect(res.setCookie).toMatch(
      /^locus_session=[^;]+; Max-Age=\d+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Strict$/,
    );
    expect((await b.call("/dashboard/api/session")).body).toEqual({
      user: { email, plan: "free" },
      csrf: b.csrf,
      notices: [],
    });
  });

  it.each([
    [{ email: "not an email", password: PASSWORD }, /not an email address/],
    [{ email: "short@example.com", password: "tooshort" }, /at least 10 characters/],
    [{ email: "same@example.com", password: "same@example.com" }, /must not be your email/],
    [{ email: "easy@example.com", password: "aaaaaaaaaaaa" }, /too easy to guess/],
    [{ email: "x@example.com" }, /"password" is required/],
  ])("refuses %j with a sentence", async (body, message) => {
    const res = await new Browser().call("/dashboard/api/signup", { method: "POST", body });
    expect(res.status).toBe(400);
    expect(String(res.body?.detail)).toMatch(message);
    expect(res.setCookie).toBeNull();
  });

  it("refuses a second account for the same email (any case), and a body that is not JSON", async () => {
    const email = newEmail();
    expect((await new Browser().signUp(email)).status).toBe(201);
    const again = await new Browser().signUp(email.toUpperCase());
    expect(again).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/already exists/) } });
    const res = await fetch(`${locus.baseUrl}/dashboard/api/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
  });
});

describe("signing in", () => {
  it("a wrong password and an unknown email get the same 401", async () => {
    const email = newEmail();
    await new Browser().signUp(email);
    const wrong = await new Browser().signIn(email, "not the password at all");
    const unknown = await new Browser().signIn(newEmail());
    expect(wrong).toMatchObject({ status: 401, body: { detail: "Wrong email or password." } });
    expect(unknown).toMatchObject({ status: 401, body: { detail: "Wrong email or password." } });
    expect((await new Browser().signIn(email)).status).toBe(200);
  });

  it("after 5 failed attempts on an account, refuses even the right password with 429 and Retry-After", async () => {
    const email = newEmail();
    await new Browser().signUp(email);
    for (let i = 0; i < 5; i++)
      expect((await new Browser().signIn(email, `wrong guess ${i}!`)).status).toBe(401);
    const blocked = await new Browser().signIn(email);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(60);
    expect(String(blocked.body?.detail)).toMatch(/Too many failed sign-ins/);
  });

  it("counts guesses as they arrive: of 100 wrong passwords sent at once for one account, 5 are checked", async () => {
    const email = newEmail();
    await new Browser().signUp(email);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => new Browser("198.51.100.10").signIn(email, `guess number ${i}`)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(95);
    recordResilience("audit-signin-burst", { guesses: 100, checked: 5, refused_429: 95 });
    // Refused guesses at one account did not use up the address: another account signs in from it.
    const other = newEmail();
    await new Browser().signUp(other);
    expect((await new Browser("198.51.100.10").signIn(other)).status).toBe(200);
  });

  it("counts an IPv6 client by its /64: twenty failures anywhere in it close it, not its neighbours", async () => {
    for (let i = 1; i <= 20; i++) {
      expect((await new Browser(`2001:db8:7:7::${i.toString(16)}`).signIn(newEmail())).status).toBe(401);
    }
    const email = newEmail();
    await new Browser().signUp(email);
    const blocked = await new Browser("2001:db8:7:7:abcd::1").signIn(email);
    expect(blocked.status).toBe(429);
    expect((await new Browser("2001:db8:7:8::1").signIn(email)).status).toBe(200);
  });

  it("bounds password hashing: a flood from many addresses gets 503 with Retry-After, never a queue without end", async () => {
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        new Browser(`203.0.113.${i % 250}`).signIn(`flood-${i}@example.com`, "not the password"),
      ),
    );
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].sort()).toEqual([401, 503]);
    for (const busy of results.filter((r) => r.status === 503)) {
      expect(busy.headers.get("retry-after")).toBe("1");
      expect(String(busy.body?.detail)).toMatch(/try again in a second/);
    }
    // Work waiting its turn is bounded: most of the flood was turned away at once.
    const busy = results.filter((r) => r.status === 503).length;
    expect(busy).toBeGreaterThan(50);
    recordResilience("audit-signin-flood", { requests: 150, checked: 150 - busy, busy_503: busy });
    // And the queue drains: a real sign-in goes through right after.
    const email = newEmail();
    await new Browser().signUp(email);
    expect((await new Browser("192.0.2.200").signIn(email)).status).toBe(200);
  });

  it("signing out ends the session on the server: the same cookie no longer works", async () => {
    const b = new Browser();
    await b.signUp(newEmail());
    const cookie = b.cookie;
    expect((await b.call("/dashboard/api/keys")).status).toBe(200);
    const out = await b.call("/dashboard/api/signout", { method: "POST" });
    expect(out.status).toBe(200);
    expect(out.setCookie).toMatch(/^locus_session=;/);
    b.cookie = cookie;
    expect((await b.call("/dashboard/api/keys")).status).toBe(401);
    expect((await b.call("/api/files")).status).toBe(401);
  });

  it("a forged or tampered cookie is not a session", async () => {
    const b = new Browser();
    await b.signUp(newEmail());
    const [name, token] = b.cookie.split("=");
    const [header, payload, signature] = (token ?? "").split(".");
    // One character changed in the middle of the signature (the last ones may carry padding bits).
    const sig = signature ?? "";
    b.cookie = `${name}=${header}.${payload}.${sig.slice(0, 10)}${sig[10] === "A" ? "B" : "A"}${sig.slice(11)}`;
    expect((await b.call("/dashboard/api/keys")).status).toBe(401);
    b.cookie = `${name}=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.`;
    expect((await b.call("/dashboard/api/keys")).status).toBe(401);
  });
});

describe("CSRF", () => {
  it("a request riding on the cookie alone is refused (403), on the dashboard's endpoints and the API", async () => {
    const b = new Browser();
    await b.signUp(newEmail());
    for (const [path, method] of [
      ["/dashboard/api/keys", "GET"],
      ["/dashboard/api/keys", "POST"],
      ["/dashboard/api/usage", "GET"],
      ["/api/files", "GET"],
      ["/api/search?q=x", "GET"],
    ] as const) {
      const body = method === "POST" ? { name: "k", type: "live" } : undefined;
      expect((await b.call(path, { method, body, csrf: false })).status).toBe(403);
      expect((await b.call(path, { method, body, csrf: "wrong-token" })).status).toBe(403);
    }
    expect((await b.call("/dashboard/api/keys", { csrf: false })).body).toEqual({
      detail: "Missing or wrong X-CSRF-Token header for this session.",
    });
    // Nothing was created by the refused POSTs.
    expect((await b.call("/dashboard/api/keys")).body).toEqual([]);
  });
});

describe("API keys", () => {
  it("shows a new key once, lists it by prefix, and revoking it refuses the API at once", async () => {
    const b = new Browser();
    await b.signUp(newEmail());
    const created = await b.call("/dashboard/api/keys", {
      method: "POST",
      body: { name: "deploy", type: "live" },
    });
    expect(created.status).toBe(201);
    const key = String(created.body?.key);
    expect(key).toMatch(/^sk_live_/);
    expect(created.body).toMatchObject({
      name: "deploy",
      type: "live",
      prefix: key.slice(0, 12),
      status: "active",
    });
    const list = await b.call("/dashboard/api/keys");
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(list.body).toEqual([
      {
        id: created.body?.id,
        name: "deploy",
        type: "live",
        prefix: key.slice(0, 12),
        created_at: expect.any(String),
        last_used_at: null,
        status: "active",
        revoked_at: null,
      },
    ]);

    const withKey = client(locus.baseUrl, key);
    expect((await withKey.get("/api/files")).status).toBe(200);
    const revoked = await b.call(`/dashboard/api/keys/${String(created.body?.id)}`, { method: "DELETE" });
    expect(revoked).toMatchObject({ status: 200, body: { status: "revoked" } });
    expect((await withKey.get("/api/files")).status).toBe(401);
    expect(
      (await b.call(`/dashboard/api/keys/${String(created.body?.id)}`, { method: "DELETE" })).status,
    ).toBe(404);
  });

  it("a test key made in the dashboard gets the sandbox's mock answers", async () => {
    const b = new Browser();
    await b.signUp(newEmail());
    const created = await b.call("/dashboard/api/keys", {
      method: "POST",
      body: { name: "tests", type: "test" },
    });
    const res = await client(locus.baseUrl, String(created.body?.key)).get("/api/search?q=anything");
    expect(((await res.json()) as { sandbox?: boolean }).sandbox).toBe(true);
  });

  it("never lists or revokes another user's keys", async () => {
    const alice = new Browser();
    const mallory = new Browser();
    await alice.signUp(newEmail());
    await mallory.signUp(newEmail());
    const key = await alice.call("/dashboard/api/keys", {
      method: "POST",
      body: { name: "alice", type: "live" },
    });
    expect((await mallory.call("/dashboard/api/keys")).body).toEqual([]);
    expect(
      (await mallory.call(`/dashboard/api/keys/${String(key.body?.id)}`, { method: "DELETE" })).status,
    ).toBe(404);
    expect((await client(locus.baseUrl, String(key.body?.key)).get("/api/files")).status).toBe(200);
  });

  it.each([
    [{ name: "", type: "live" }, /"name" is required/],
    [{ name: "x", type: "prod" }, /"type" must be "live" or "test"/],
    [{ name: "x".repeat(101), type: "live" }, /too long/],
  ])("refuses %j", async (body, message) => {
    const b = new Browser();
    await b.signUp(newEmail());
    const res = await b.call("/dashboard/api/keys", { method: "POST", body });
    expect(res.status).toBe(400);
    expect(String(res.body?.detail)).toMatch(message);
  });
});

describe("files and usage through the session", () => {
  it("uploads with the session as the live account: counted against the quota, visible to the account's keys", async () => {
    const b = new Browser();
    await b.signUp(newEmail());
    const usage = await b.call("/dashboard/api/usage");
    expect(usage.body).toEqual({
      plan: "free",
      rate_limit_per_second: 200,
      monthly_upload_quota: 3,
      uploads_this_month: 0,
      month: new Date().toISOString().slice(0, 7),
      max_upload_bytes: expect.any(Number),
      days: expect.any(Array),
      per_key: [],
    });
    const form = new FormData();
    form.append(
      "file",
      new Blob([new Uint8Array(await makePdf({ pages: [["A page about otters."]] }))]),
      "otters.pdf",
    );
    const res = await fetch(`${locus.baseUrl}/api/files/upload`, {
      method: "POST",
      headers: { cookie: b.cookie, "x-csrf-token": b.csrf },
      body: form,
    });
    expect(res.status).toBe(200);
    const { file } = (await res.json()) as { file: { id: string } };
    expect((await b.call("/dashboard/api/usage")).body?.uploads_this_month).toBe(1);

    const key = await b.call("/dashboard/api/keys", { method: "POST", body: { name: "k", type: "live" } });
    const withKey = client(locus.baseUrl, String(key.body?.key));
    await waitForFile(withKey, file.id);
    const search = (await (await withKey.get("/api/search?q=otters")).json()) as {
      results: { file_id: string }[];
    };
    expect(search.results.map((r) => r.file_id)).toEqual([file.id]);

    // Without the CSRF token the same upload is refused, and nothing is counted.
    const refused = await fetch(`${locus.baseUrl}/api/files/upload`, {
      method: "POST",
      headers: { cookie: b.cookie },
      body: form,
    });
    expect(refused.status).toBe(403);
    expect((await b.call("/dashboard/api/usage")).body?.uploads_this_month).toBe(1);

    // Per day and per key: the session's upload as the dashboard's, the key's search as its own.
    // A test key's search counts nothing.
    const testKey = await b.call("/dashboard/api/keys", {
      method: "POST",
      body: { name: "t", type: "test" },
    });
    expect((await client(locus.baseUrl, String(testKey.body?.key)).get("/api/search?q=otters")).status).toBe(
      200,
    );
    await withKey.get("/api/search?q=otters");
    const today = new Date().toISOString().slice(0, 10);
    // Counted after the answer is sent: look until the count is in.
    const counted = async () => {
      for (let i = 0; ; i++) {
        const body = (await b.call("/dashboard/api/usage")).body as unknown as DashboardUsage;
        if (body.days.at(-1)?.searches === 2 || i === 50) return body;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const daily = await counted();
    expect(daily.days).toHaveLength(30);
    expect(daily.days.at(-1)).toEqual({ day: today, searches: 2, uploads: 1 });
    expect(daily.days.slice(0, -1).every((d) => d.searches === 0 && d.uploads === 0)).toBe(true);
    expect(daily.per_key).toEqual([
      { key: expect.objectContaining({ id: key.body?.id, name: "k" }), searches: 2, uploads: 0 },
      { key: null, searches: 0, uploads: 1 },
    ]);
  }, 60_000);
});

describe("renaming a key", () => {
  it("renames the user's own key, refuses an empty name and another user's key", async () => {
    const alice = new Browser();
    const mallory = new Browser();
    await alice.signUp(newEmail());
    await mallory.signUp(newEmail());
    const key = await alice.call("/dashboard/api/keys", {
      method: "POST",
      body: { name: "old", type: "live" },
    });
    const path = `/dashboard/api/keys/${String(key.body?.id)}`;
    const renamed = await alice.call(path, { method: "PATCH", body: { name: "  production  " } });
    expect(renamed).toMatchObject({
      status: 200,
      body: { id: key.body?.id, name: "production", status: "active" },
    });
    expect(renamed.body).not.toHaveProperty("key");
    expect((await alice.call("/dashboard/api/keys")).body).toEqual([renamed.body]);
    expect((await alice.call(path, { method: "PATCH", body: { name: "   " } })).status).toBe(400);
    expect((await mallory.call(path, { method: "PATCH", body: { name: "mine" } })).status).toBe(404);
    // Riding on the cookie alone is refused, as every change is.
    expect((await alice.call(path, { method: "PATCH", body: { name: "x" }, csrf: false })).status).toBe(403);
    expect((await alice.call("/dashboard/api/keys")).body).toEqual([renamed.body]);
  });
});

describe("behind a TLS-terminating proxy (trusted: LOCUS_TRUST_PROXY=loopback)", () => {
  it("sets a Secure cookie and hands out https links when the proxy says the client came over HTTPS", async () => {
    const email = newEmail();
    const viaTls = await fetch(`${locus.baseUrl}/dashboard/api/signup`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-forwarded-for": "198.51.100.77",
        "x-forwarded-proto": "https",
      },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(viaTls.status).toBe(201);
    expect(viaTls.headers.get("set-cookie")).toMatch(/; Secure;|; Secure$/);
    // Plain HTTP to Locus itself (a health check, a developer): no Secure flag, or it would not stick.
    const plain = await new Browser().signUp(newEmail());
    expect(plain.setCookie).not.toMatch(/Secure/);

    const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    const c = client(locus.baseUrl, key);
    const up = await c.upload(await makePdf({ pages: [["Links for a proxied client."]] }), "proxied.pdf");
    const { file } = (await up.json()) as { file: { id: string } };
    const link = await c.get(`/api/files/${file.id}/preview-url`, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "search.example.com",
    });
    expect(((await link.json()) as { url: string }).url).toMatch(
      /^https:\/\/search\.example\.com\/previews\//,
    );
  });
});

describe("the CLI on the same accounts", () => {
  it("a user made by the CLI signs in once an operator sets a password; until then sign-up says it exists", async () => {
    const { email } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    expect((await new Browser().signIn(email)).status).toBe(401);
    expect((await new Browser().signUp(email)).status).toBe(409);

    const weak = await runCli(locus.dataDir, ["users", "password", "--email", email], {}, "short\n");
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(/at least 10 characters/);
    const set = await runCli(locus.dataDir, ["users", "password", "--email", email], {}, `${PASSWORD}\n`);
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain(PASSWORD);

    const b = new Browser();
    expect((await b.signIn(email)).body).toMatchObject({ user: { email, plan: "pro" } });
    // Keys the CLI made are listed in the dashboard.
    expect((await b.call("/dashboard/api/keys")).body).toEqual([expect.objectContaining({ type: "live" })]);
  }, 60_000);
});

describe("the page", () => {
  it("loads its native modules from its own origin: each one served as JavaScript, allowed by its CSP", async () => {
    const page = await fetch(`${locus.baseUrl}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self';");
    const entry = /<script type="module" src="([^"]+)"><\/script>/.exec(await page.text())?.[1];
    expect(entry).toBe("/dashboard/assets/app.js");
    // Every module the entry imports, and those they import: no bundle, so each is a request.
    const seen = new Set<string>();
    const pending = [entry ?? ""];
    for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await fetch(`${locus.baseUrl}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
      for (const [, from] of (await res.text()).matchAll(/^import [^;]*? from "(\.\/[\w/-]+\.js)";$/gm)) {
        pending.push(new URL(from ?? "", `http://page${path}`).pathname);
      }
    }
    expect(seen.size).toBeGreaterThan(5);
    // Only the page's files: not its type-check settings, not anything else in the folder.
    for (const path of ["/dashboard/assets/tsconfig.json", "/dashboard/assets/js/tsconfig.json"]) {
      expect((await fetch(`${locus.baseUrl}${path}`)).status).toBe(404);
    }
  });
});

it("never writes a password, a session cookie or a CSRF token to the logs", async () => {
  const b = new Browser();
  const email = newEmail();
  await b.signUp(email, "a password for the logs test");
  await new Browser().signIn(email, "a wrong password for the logs test");
  const logs = locus.logs.join("\n");
  expect(logs).not.toContain("a password for the logs test");
  expect(logs).not.toContain("a wrong password for the logs test");
  expect(logs).not.toContain(b.cookie.split("=")[1]);
  expect(logs).not.toContain(b.csrf);
});
