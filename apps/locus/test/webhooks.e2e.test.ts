/// <reference lib="dom" />
import { mkdirSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { chromium, type Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import {
  client,
  createUserWithKey,
  makePdf,
  REPO_ROOT,
  removeDataDir,
  runCli,
  startLocus,
  tempDataDir,
  waitForFile,
  type LocusProcess,
} from "@locus/testing";
import { arraySchemaErrors, schemaErrors } from "./openapi-validator.ts";

/**
 * Webhooks end to end, on one Locus (restarted once): a real receiver on loopback (allowed here by
 * LOCUS_WEBHOOK_ALLOW_ADDRESSES=loopback), a short retry schedule, signatures checked with the
 * `standardwebhooks` package (the specification's reference library), and every answer of the API
 * checked against /openapi.json.
 */

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How each path of the receiver answers; a function of how many requests it has had. */
type Behaviour = (count: number) => number | "hang";

class Receiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly hanging = new Set<() => void>();
  private server!: Server;

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    receiver.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        receiver.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
        const count = receiver.received.filter((r) => r.path === path).length;
        const answer = (receiver.behaviours.get(path) ?? (() => 200))(count);
        if (answer === "hang") {
          // Never answered while the test wants it to hang; let go at the end.
          receiver.hanging.add(() => res.destroy());
          return;
        }
        res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "ok" : "no");
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  on(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const release of this.hanging) release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ENV = {
  LOCUS_WEBHOOK_ALLOW_ADDRESSES: "loopback",
  // Three attempts 0.3 s apart: retries and giving up take about a second.
  LOCUS_WEBHOOK_RETRY_SCHEDULE_S: "0.3,0.3",
  LOCUS_WEBHOOK_TIMEOUT_MS: "1500",
  LOCUS_RATE_LIMIT_PRO: "1000",
};

const dataDir = tempDataDir();
let locus: LocusProcess;
let receiver: Receiver;
let key = "";
let otherKey = "";
let testKey = "";
let ownerEmail = "";

beforeAll(async () => {
  receiver = await Receiver.start();
  locus = await startLocus({ dataDir, env: ENV });
  const owner = await createUserWithKey(dataDir, { plan: "pro" });
  key = owner.key;
  ownerEmail = owner.email;
  const test = await runCli(dataDir, ["keys", "create", "--email", owner.email, "--type", "test"]);
  testKey = test.stdout.trimEnd().split("\n").at(-1) ?? "";
  otherKey = (await createUserWithKey(dataDir, { plan: "pro" })).key;
}, 120_000);

afterAll(async () => {
  await locus?.stop();
  await receiver?.close();
  removeDataDir(dataDir);
});

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret?: string;
}
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  attempt_log: { status_code: number | null; error: string | null }[];
}

function api(k: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${locus.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${k}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return {
      status: res.status,
      location: res.headers.get("location"),
      body: (text ? JSON.parse(text) : null) as unknown,
    };
  };
  return {
    call,
    async create(url: string, events?: string[]): Promise<Endpoint> {
      const res = await call("POST", "/api/webhooks", {
        url,
        ...(events ? { events } : {}),
        description: "e2e",
      });
      expect(res.status).toBe(201);
      expect(schemaErrors("WebhookEndpointWithSecret", res.body)).toBeNull();
      // Where the new endpoint lives, as REST says a 201 should.
      expect(res.location).toBe(`${locus.baseUrl}/api/webhooks/${(res.body as Endpoint).id}`);
      return res.body as Endpoint;
    },
    async deliveries(endpointId: string): Promise<Delivery[]> {
      const res = await call("GET", `/api/webhooks/${endpointId}/deliveries`);
      expect(res.status).toBe(200);
      expect(schemaErrors("WebhookDeliveryPage", res.body)).toBeNull();
      return (res.body as { deliveries: Delivery[] }).deliveries;
    },
  };
}

/** The request's signature, checked by the reference library; returns the parsed body. */
function verified(
  secret: string,
  request: Received,
): { type: string; data: { file: { id: string; status: string } } } {
  const headers = {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  };
  return new Webhook(secret).verify(request.body, headers) as ReturnType<typeof verified>;
}

describe("webhooks", () => {
  let ok: Endpoint;
  let flaky: Endpoint;
  let failing: Endpoint;
  let fileId = "";

  it("delivers file.ready, signed, to every subscribed endpoint; retries a failing one; disables one that never succeeds", async () => {
    const owner = api(key);
    receiver.on("/flaky", (n) => (n === 1 ? 500 : 204));
    receiver.on("/down", () => 500);
    ok = await owner.create(receiver.url("/ok"));
    expect(ok).toMatchObject({ events: ["file.ready", "file.failed", "file.deleted"], enabled: true });
    expect(ok.secret).toMatch(/^whsec_/);
    flaky = await owner.create(receiver.url("/flaky"), ["file.ready"]);
    failing = await owner.create(receiver.url("/down"), ["file.ready"]);
    // The secret is shown once: never in a read or a list.
    const listed = await owner.call("GET", "/api/webhooks");
    expect(arraySchemaErrors("WebhookEndpoint", listed.body)).toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");

    const c = client(locus.baseUrl, key);
    const res = await c.upload(await makePdf({ pages: [["Herons nest by the mill pond."]] }), "heron.pdf");
    fileId = ((await res.json()) as { file: { id: string } }).file.id;
    expect((await waitForFile(c, fileId)).status).toBe("ready");

    const [ready] = await until("file.ready at /ok", () =>
      receiver.at("/ok").length > 0 ? receiver.at("/ok") : undefined,
    );
    const event = verified(ok.secret!, ready!);
    expect(event).toMatchObject({ type: "file.ready", data: { file: { id: fileId, status: "ready" } } });
    expect(ready!.headers["content-type"]).toBe("application/json");

    // 500, then a retry 0.3 s later that succeeds: both attempts in the log.
    const flakyLog = await until("the flaky endpoint's success", async () => {
      const [d] = await owner.deliveries(flaky.id);
      return d?.status === "succeeded" ? d : undefined;
    });
    expect(flakyLog.attempt_log.map((a) => a.status_code)).toEqual([500, 204]);
    expect(flakyLog.attempt_log[0]?.error).toMatch(/HTTP 500/);
    const flakyRequests = receiver.at("/flaky");
    // One event, one id, on every attempt, each signed.
    expect(new Set(flakyRequests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    for (const r of flakyRequests) expect(verified(flaky.secret!, r).type).toBe("file.ready");

    // Three attempts, all refused: the delivery fails and the endpoint is disabled with a reason.
    const disabled = await until("the failing endpoint disabled", async () => {
      const got = await owner.call("GET", `/api/webhooks/${failing.id}`);
      const endpoint = got.body as Endpoint;
      return endpoint.enabled ? undefined : endpoint;
    });
    expect(schemaErrors("WebhookEndpoint", disabled)).toBeNull();
    expect(disabled.disabled_reason).toMatch(/3 failed attempts.*file\.ready/);
    const [failed] = await owner.deliveries(failing.id);
    expect(failed).toMatchObject({ status: "failed", attempts: 3 });
    expect(receiver.at("/down")).toHaveLength(3);
  });

  it("redelivers on request with the same id, and an endpoint is enabled again by PATCH", async () => {
    const owner = api(key);
    const [delivery] = await owner.deliveries(ok.id);
    const before = receiver.at("/ok").length;
    const res = await owner.call("POST", `/api/webhooks/${ok.id}/deliveries/${delivery!.id}/redeliver`);
    expect(res.status).toBe(202);
    expect(schemaErrors("WebhookDeliverySummary", res.body)).toBeNull();
    const again = await until("the redelivery", () => receiver.at("/ok")[before]);
    expect(again.headers["webhook-id"]).toBe(delivery!.event_id);
    expect(verified(ok.secret!, again).type).toBe("file.ready");
    await until("the redelivery logged", async () => {
      const [d] = await owner.deliveries(ok.id);
      return d?.attempts === 2 && d.status === "succeeded" ? d : undefined;
    });

    // Enabled again, it gets the next file.ready (the restart test's), fails again and is disabled
    // again: the browser test finds it so.
    const enabled = await owner.call("PATCH", `/api/webhooks/${failing.id}`, {
      enabled: true,
      description: "back",
    });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, description: "back" });
    const spare = await owner.create(receiver.url("/spare"));
    expect((await owner.call("DELETE", `/api/webhooks/${spare.id}`)).status).toBe(200);
    expect((await owner.call("GET", `/api/webhooks/${spare.id}`)).status).toBe(404);
  });

  it("announces a deleted file to the endpoints subscribed to file.deleted", async () => {
    const before = receiver.at("/flaky").length;
    expect((await client(locus.baseUrl, key).del(`/api/files/${fileId}`)).status).toBe(200);
    const deleted = await until("file.deleted at /ok", () =>
      receiver.at("/ok").find((r) => verified(ok.secret!, r).type === "file.deleted"),
    );
    expect(verified(ok.secret!, deleted).data.file.id).toBe(fileId);
    // Not subscribed to it.
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at("/flaky")).toHaveLength(before);
  });

  it("refuses receivers on addresses the operator has not allowed, and malformed bodies, FastAPI-style", async () => {
    const owner = api(key);
    for (const url of [
      "http://10.0.0.7/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://[fd00::1]/",
    ]) {
      const res = await owner.call("POST", "/api/webhooks", { url });
      expect(res.status).toBe(422);
      expect(schemaErrors("HTTPValidationError", res.body)).toBeNull();
      expect(res.body).toMatchObject({
        detail: [
          { type: "value_error", loc: ["body", "url"], msg: expect.stringMatching(/private|link-local/) },
        ],
      });
    }
    // Loopback is allowed here, but an unspecified address names no receiver.
    for (const url of ["http://0.0.0.0:9/hook", "http://[::]:9/hook"]) {
      const res = await owner.call("POST", "/api/webhooks", { url });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({
        detail: [{ loc: ["body", "url"], msg: expect.stringMatching(/unspecified/) }],
      });
    }
    const bad = await owner.call("POST", "/api/webhooks", {
      events: ["file.ready", "file.exploded"],
      description: 5,
    });
    expect(bad.status).toBe(422);
    expect(
      (bad.body as { detail: { type: string; loc: unknown[] }[] }).detail.map((d) => [d.type, d.loc]),
    ).toEqual([
      ["missing", ["body", "url"]],
      ["literal_error", ["body", "events", 1]],
      ["string_type", ["body", "description"]],
    ]);
    expect((await owner.call("POST", "/api/webhooks", { url: "ftp://example.com/" })).status).toBe(422);
    expect((await owner.call("GET", "/api/webhooks/not-a-uuid")).body).toMatchObject({
      detail: [{ type: "uuid_parsing", loc: ["path", "endpoint_id"] }],
    });
  });

  it("another account never sees or touches the endpoints or deliveries; a test key gets the sandbox", async () => {
    const other = api(otherKey);
    expect((await other.call("GET", "/api/webhooks")).body).toEqual([]);
    // Twenty endpoints an account; the twenty-first is refused.
    for (let i = 0; i < 20; i++) await other.create(receiver.url(`/other-${i}`), ["file.failed"]);
    const tooMany = await other.call("POST", "/api/webhooks", { url: receiver.url("/other-20") });
    expect(tooMany).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/at most 20/) } });
    expect((await other.call("GET", "/api/webhooks")).body).toHaveLength(20);
    const [delivery] = await api(key).deliveries(ok.id);
    for (const [method, path] of [
      ["GET", `/api/webhooks/${ok.id}`],
      ["PATCH", `/api/webhooks/${ok.id}`],
      ["DELETE", `/api/webhooks/${ok.id}`],
      ["POST", `/api/webhooks/${ok.id}/rotate-secret`],
      ["GET", `/api/webhooks/${ok.id}/deliveries`],
      ["POST", `/api/webhooks/${ok.id}/deliveries/${delivery!.id}/redeliver`],
    ] as const) {
      const res = await other.call(method, path, method === "PATCH" ? { enabled: true } : undefined);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    expect((await api(key).call("GET", `/api/webhooks/${ok.id}`)).status).toBe(200);

    const sandbox = api(testKey);
    const created = await sandbox.call("POST", "/api/webhooks", { url: "https://example.com/x" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sandbox: true, url: "https://example.com/x" });
    expect(schemaErrors("WebhookEndpointWithSecret", created.body)).toBeNull();
    const page = await sandbox.call("GET", "/api/webhooks/whep_sandbox_example/deliveries");
    expect(schemaErrors("WebhookDeliveryPage", page.body)).toBeNull();
    // Nothing was stored for the account.
    const live = (await api(key).call("GET", "/api/webhooks")).body as Endpoint[];
    expect(live.map((e) => e.id).sort()).toEqual([ok.id, flaky.id, failing.id].sort());
  });

  it("loses nothing across a restart: an attempt cut short by the stop is delivered after it", async () => {
    const owner = api(key);
    let answering = false;
    receiver.on("/slow", () => (answering ? 200 : "hang"));
    const slow = await owner.create(receiver.url("/slow"), ["file.ready"]);
    const c = client(locus.baseUrl, key);
    const res = await c.upload(
      await makePdf({ pages: [["Kingfishers dive in the weir."]] }),
      "kingfisher.pdf",
    );
    const id = ((await res.json()) as { file: { id: string } }).file.id;
    expect((await waitForFile(c, id)).status).toBe("ready");
    await until("the first attempt at /slow", () => receiver.at("/slow")[0]);

    expect(await locus.stop()).toBe(0);
    answering = true;
    locus = await startLocus({ dataDir, env: ENV });

    const delivered = await until("the delivery after the restart", async () => {
      const [d] = await api(key).deliveries(slow.id);
      return d?.status === "succeeded" ? d : undefined;
    });
    expect(delivered.attempt_log[0]?.error).toMatch(/did not answer within 1500 ms/);
    expect(delivered.attempt_log.at(-1)?.status_code).toBe(200);
    const requests = receiver.at("/slow");
    expect(new Set(requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(verified(slow.secret!, requests.at(-1)!).data.file.id).toBe(id);
  }, 90_000);

  it("the dashboard's page: the owner is told which endpoint was disabled and why, sees deliveries, adds and deletes endpoints", async () => {
    // The endpoint enabled again above failed the restart test's file.ready too: disabled again.
    await until(
      "the failing endpoint disabled again",
      async () => {
        const endpoint = (await api(key).call("GET", `/api/webhooks/${failing.id}`)).body as Endpoint;
        return endpoint.enabled ? undefined : endpoint;
      },
      30_000,
    );
    const password = "a long enough passphrase";
    expect(
      (await runCli(dataDir, ["users", "password", "--email", ownerEmail], {}, `${password}\n`)).code,
    ).toBe(0);

    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const pageErrors: string[] = [];
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      page.on("pageerror", (err) => pageErrors.push(err.message));
      await page.goto(`${locus.baseUrl}/dashboard#/signin`);
      await page.getByLabel("Email").fill(ownerEmail);
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();

      const notice = page.getByRole("alert").filter({ hasText: "Disabled:" });
      await expect(notice.textContent()).resolves.toMatch(/\/down.*3 failed attempts to deliver file\.ready/);
      await checked(page, "webhooks");

      // The delivery log of the endpoint that succeeded: its attempts, and a redelivery.
      await page.getByRole("button", { name: `Deliveries to ${ok.url}` }).click();
      const log = page.getByRole("table", { name: /Deliveries to/ });
      await log.waitFor();
      await expect(log.textContent()).resolves.toMatch(/file\.deleted.*Delivered/s);
      await checked(page, "webhooks-deliveries");

      // Enabled again from the notice: the notice goes.
      await notice.getByRole("button").click();
      await expect(page.getByText(/goes out now/).waitFor()).resolves.toBeUndefined();
      await page.getByRole("alert").filter({ hasText: "Disabled:" }).waitFor({ state: "detached" });

      // An address Locus may not send to is refused with the reason; a good one shows its secret once.
      await page.getByLabel("URL", { exact: true }).fill("http://10.1.2.3/hook");
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await expect(page.getByRole("alert").filter({ hasText: "private" }).textContent()).resolves.toMatch(
        /private address/,
      );
      await page.getByLabel("URL", { exact: true }).fill(receiver.url("/from-the-page"));
      await page.getByRole("checkbox", { name: "file.deleted" }).uncheck();
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await expect(page.locator("#webhook-secret").inputValue()).resolves.toMatch(/^whsec_/);
      const added = ((await api(key).call("GET", "/api/webhooks")).body as Endpoint[]).find((e) =>
        e.url.endsWith("/from-the-page"),
      );
      expect(added?.events).toEqual(["file.ready", "file.failed"]);
      await checked(page, "webhooks-added");

      await page.getByRole("button", { name: `Delete ${receiver.url("/from-the-page")}` }).click();
      await page.getByRole("button", { name: "Delete endpoint" }).click();
      await page.getByText("Endpoint deleted.").waitFor();
      expect((await api(key).call("GET", `/api/webhooks/${added!.id}`)).status).toBe(404);
    } finally {
      await browser.close();
    }
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it("holds what happens while an endpoint is disabled, by its owner or after failures, and sends it once enabled; the event log has every event", async () => {
    const owner = api(key);
    let recovered = false;
    receiver.on("/recovering", () => (recovered ? 204 : 500));
    const held = await owner.create(receiver.url("/held"), ["file.ready"]);
    const recovering = await owner.create(receiver.url("/recovering"), ["file.ready"]);
    const off = await owner.call("PATCH", `/api/webhooks/${held.id}`, { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: "Disabled by its owner." });

    const c = client(locus.baseUrl, key);
    const upload = async (words: string, name: string) => {
      const res = await c.upload(await makePdf({ pages: [[words]] }), name);
      const id = ((await res.json()) as { file: { id: string } }).file.id;
      expect((await waitForFile(c, id)).status).toBe("ready");
      return id;
    };
    const first = await upload("Wagtails bob along the towpath.", "wagtail.pdf");
    // Three failed attempts: the second endpoint is disabled too, automatically.
    await until("the recovering endpoint disabled", async () => {
      const endpoint = (await owner.call("GET", `/api/webhooks/${recovering.id}`)).body as Endpoint;
      return endpoint.enabled ? undefined : endpoint;
    });
    const second = await upload("Swifts scream over the rooftops.", "swift.pdf");

    // Every event is in the log, whoever was told of it.
    const ready = await until("both file.ready events in the log", async () => {
      const res = await owner.call("GET", "/api/events?type=file.ready&limit=100");
      expect(schemaErrors("EventPage", res.body)).toBeNull();
      const events = (res.body as { events: { id: string; data: { file: { id: string } } }[] }).events;
      const byFile = (id: string) => events.find((e) => e.data.file.id === id);
      const [a, b] = [byFile(first), byFile(second)];
      return a && b ? [a, b] : undefined;
    });
    const one = await owner.call("GET", `/api/events/${ready[0]!.id}`);
    expect(schemaErrors("Event", one.body)).toBeNull();
    expect(one.body).toMatchObject({ type: "file.ready", data: { file: { id: first, status: "ready" } } });
    expect((await api(otherKey).call("GET", `/api/events/${ready[0]!.id}`)).status).toBe(404);
    expect((await api(otherKey).call("GET", "/api/events")).body).toEqual({ events: [], next_cursor: null });
    const deletedOnly = (await owner.call("GET", "/api/events?type=file.deleted")).body as {
      events: { type: string }[];
    };
    expect(deletedOnly.events.every((e) => e.type === "file.deleted")).toBe(true);
    const sandbox = await api(testKey).call("GET", "/api/events");
    expect(sandbox.body).toMatchObject({ sandbox: true, events: [{ type: "file.ready" }] });
    expect(schemaErrors("EventPage", sandbox.body)).toBeNull();

    // Held, not sent: the delivery log says so.
    const [waiting] = await owner.deliveries(held.id);
    expect(waiting).toMatchObject({ status: "pending", attempts: 0 });
    expect(receiver.at("/held")).toHaveLength(0);

    // Enabled again, each endpoint gets what it was owed, oldest first, under the events' ids.
    recovered = true;
    for (const endpoint of [held, recovering])
      expect((await owner.call("PATCH", `/api/webhooks/${endpoint.id}`, { enabled: true })).status).toBe(200);
    const sent = await until("both held events at /held", () =>
      receiver.at("/held").length >= 2 ? receiver.at("/held") : undefined,
    );
    expect(sent.map((r) => verified(held.secret!, r).data.file.id)).toEqual([first, second]);
    expect(sent.map((r) => r.headers["webhook-id"])).toEqual(ready.map((e) => e.id));
    // The automatically disabled one: the event held for it goes out; the one that failed stays
    // failed (redeliverable).
    const delivered = await until("the held event at /recovering", () =>
      receiver.at("/recovering").find((r) => verified(recovering.secret!, r).data.file.id === second),
    );
    expect(delivered.headers["webhook-id"]).toBe(ready[1]!.id);
  }, 90_000);

  it("signs with the replaced secret too for a day after a rotation, so receivers can switch; at once when asked", async () => {
    const owner = api(key);
    const endpoint = await owner.create(receiver.url("/rotating"), ["file.ready"]);
    const c = client(locus.baseUrl, key);
    const deliveredAfter = async (words: string) => {
      const before = receiver.at("/rotating").length;
      const res = await c.upload(await makePdf({ pages: [[words]] }), "rotation.pdf");
      const id = ((await res.json()) as { file: { id: string } }).file.id;
      expect((await waitForFile(c, id)).status).toBe("ready");
      return until("the delivery at /rotating", () => receiver.at("/rotating")[before]);
    };

    const rotated = await owner.call("POST", `/api/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(schemaErrors("WebhookEndpointWithSecret", rotated.body)).toBeNull();
    const fresh = rotated.body as Endpoint & { previous_secret_expires_at: string | null };
    expect(fresh.secret).not.toBe(endpoint.secret);
    const overlap = Date.parse(fresh.previous_secret_expires_at ?? "") - Date.now();
    expect(overlap).toBeGreaterThan(86_400_000 - 60_000);
    expect(overlap).toBeLessThanOrEqual(86_400_000);
    const overlapping = await deliveredAfter("Rooks gather in the elms.");
    expect(String(overlapping.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verified(fresh.secret!, overlapping).type).toBe("file.ready");
    expect(verified(endpoint.secret!, overlapping).type).toBe("file.ready");

    // A leaked secret is dropped at once.
    const leaked = await owner.call("POST", `/api/webhooks/${endpoint.id}/rotate-secret`, { overlap_s: 0 });
    expect(leaked.body).toMatchObject({ previous_secret_expires_at: null });
    const newest = (leaked.body as Endpoint).secret!;
    const alone = await deliveredAfter("Jackdaws nest in the chimney.");
    expect(verified(newest, alone).type).toBe("file.ready");
    expect(() => verified(fresh.secret!, alone)).toThrow();
    expect(() => verified(endpoint.secret!, alone)).toThrow();

    const bad = await owner.call("POST", `/api/webhooks/${endpoint.id}/rotate-secret`, { overlap_s: 1e9 });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ detail: [{ type: "less_than_equal", loc: ["body", "overlap_s"] }] });
  }, 90_000);
});

const ARTIFACTS = join(REPO_ROOT, "test-artifacts", "dashboard");
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** axe-core's WCAG 2 A/AA check (no serious or critical violation), then a screenshot. */
async function checked(page: Page, name: string): Promise<void> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            options: object,
          ): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run({ runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"] } });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
