import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SignJWT } from "jose";
import pg from "pg";
import { ServiceIdentity } from "@locus/http";
import {
  client,
  createUserWithKey,
  freePortBlock,
  makePdf,
  metricValue,
  pageWith,
  rateLimitBursts,
  runCli,
  recordResilience,
  scrapeMetrics,
  startOtlpReceiver,
  startPrometheus,
  startSplitStack,
  TEST_DATABASE_URL,
  waitForFile,
  type OtlpReceiver,
  type ReceivedSpan,
  type SplitStack,
} from "@locus/testing";

/**
 * What only the split shape has to prove: two gateway replicas share rate limits and revocations,
 * and a 1,000-page PDF moves through the broker (its extraction travels as a blob, not a message).
 */
let stack: SplitStack;
// Known to the test, so that it can speak to the internal ports as a gateway (or an intruder) would.
const INTERNAL_SECRET = randomBytes(32).toString("base64url");
// Every process sends its spans here (OTLP/JSON), as to a collector.
let traces: OtlpReceiver;
beforeAll(async () => {
  traces = await startOtlpReceiver();
  stack = await startSplitStack({
    gateways: 2,
    env: {
      // Each process its own metrics port, counting up from this one (the launcher's scrape config).
      LOCUS_METRICS_PORT: String(await freePortBlock(20)),
      LOCUS_INTERNAL_SECRET: INTERNAL_SECRET,
      OTEL_EXPORTER_OTLP_ENDPOINT: traces.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      // The webhooks test's receiver listens on loopback.
      LOCUS_WEBHOOK_ALLOW_ADDRESSES: "loopback",
    },
  });
}, 180_000);
afterAll(async () => {
  await stack.stop();
  await traces.close();
});

it("traces an upload across the processes, over HTTP and RabbitMQ's headers, to its file's ready", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const c = client(stack.baseUrl, key);
  const res = await c.upload(
    await makePdf({ pages: [pageWith("A heron traced in split mode.", 3)] }),
    "t.pdf",
  );
  const { file } = (await res.json()) as { file: { id: string } };
  expect(await waitForFile(c, file.id)).toMatchObject({ status: "ready" });
  const isReady = (s: ReceivedSpan) => s.name === "file ready" && s.attributes["locus.file.id"] === file.id;
  // From ready back to the trace's root: each step's span is its parent's child, whichever process
  // made it, so the context crossed every call and message. Undefined while a parent has not
  // arrived yet: each process sends its spans on its own schedule.
  const chainFrom = (all: ReceivedSpan[]): ReceivedSpan[] | undefined => {
    const chain: ReceivedSpan[] = [];
    for (let span = all.find(isReady); span;) {
      chain.unshift(span);
      const { traceId, parentSpanId } = span;
      if (!parentSpanId) return chain;
      span = all.find((s) => s.traceId === traceId && s.spanId === parentSpanId);
    }
    return undefined;
  };
  const spans = await traces.waitFor(
    (all) => chainFrom(all) !== undefined,
    20_000,
    "the trace, ready to root",
  );
  const chain = chainFrom(spans)!;
  const steps = chain.map((s) => `${s.service}: ${s.name}`);
  expect(steps[0]).toMatch(/^gateway-\d: POST \/api\/files\/upload$/);
  expect(steps).toEqual(
    expect.arrayContaining([
      "files: publish file.uploaded.pdf",
      "extractor-pdf: process file.uploaded.pdf",
      "extractor-pdf: extract pdf",
      "extractor-pdf: publish file.extracted",
      "indexer: process file.extracted",
      "indexer: index",
      "indexer: publish file.indexed",
      "files: process file.indexed",
      "files: file ready",
    ]),
  );
  // The gateway called the files service: a CLIENT span, then the callee's SERVER span under it.
  const called = chain.findIndex((s) => s.service === "files" && s.kind === 2);
  expect(chain[called - 1]).toMatchObject({ kind: 3, name: expect.stringMatching(/^POST files$/) as string });
  const consumed = chain.filter((s) => s.kind === 5);
  expect(consumed.map((s) => s.attributes["messaging.system"])).toEqual(["rabbitmq", "rabbitmq", "rabbitmq"]);
  // The upload's own span, in the files service under its internal request.
  const upload = spans.find((s) => s.name === "upload" && s.attributes["locus.file.id"] === file.id);
  expect(upload).toMatchObject({ service: "files", traceId: chain[0]?.traceId });
  expect(JSON.stringify(spans)).not.toContain(key);
});

it("shares one account's rate limit across two gateway replicas", async () => {
  // A free account: 5 requests a second. Counted per replica, each gateway would let 5 through.
  const bursts = await rateLimitBursts(async () => {
    const { key } = await createUserWithKey(stack.dataDir, { plan: "free", env: stack.cliEnv });
    const [a, b] = stack.gatewayUrls.map((url) => client(url, key));
    return (i) => (i % 2 === 0 ? a! : b!).get("/api/files");
  });
  for (const { responses, allowed, windows } of bursts) {
    expect(responses.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(allowed).toBeGreaterThanOrEqual(5);
    // What one shared count lets through in the time the burst took: 5 for each window it spans.
    expect(allowed).toBeLessThanOrEqual(5 * windows);
  }
  // Only a burst within one window tells one shared count (5) from two (10): one of them must be.
  const spans = bursts.map((b) => `${Math.round(b.elapsedMs)} ms`).join(", ");
  expect(bursts.some((b) => b.windows === 1) ? "one burst within a second" : spans).toBe(
    "one burst within a second",
  );
});

it("delivers a file's webhook from the webhooks process, whose API the gateway reaches over signed HTTP", async () => {
  const received: { id: string; body: string }[] = [];
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      received.push({ id: String(req.headers["webhook-id"]), body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const created = await fetch(`${stack.gatewayUrls[1]!}/api/webhooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url, events: ["file.ready"] }),
    });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { id: string; secret: string };
    const c = client(stack.baseUrl, key);
    const res = await c.upload(await makePdf({ pages: [pageWith("A heron by the weir.", 2)] }), "w.pdf");
    const { file } = (await res.json()) as { file: { id: string } };
    expect(await waitForFile(c, file.id, 60_000)).toMatchObject({ status: "ready" });
    for (const deadline = Date.now() + 20_000; received.length === 0 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100));
    expect(JSON.parse(received[0]?.body ?? "{}")).toMatchObject({
      type: "file.ready",
      data: { file: { id: file.id } },
    });
    const log = await c.get(`/api/webhooks/${endpoint.id}/deliveries`);
    expect(await log.json()).toMatchObject({
      deliveries: [{ event_id: received[0]?.id, status: "succeeded" }],
    });
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});

it("refuses a revoked key on every replica", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const clients = stack.gatewayUrls.map((url) => client(url, key));
  for (const c of clients) expect((await c.get("/api/files")).status).toBe(200);
  expect((await runCli(stack.dataDir, ["keys", "revoke", key], stack.cliEnv)).code).toBe(0);
  for (const c of clients) expect((await c.get("/api/files")).status).toBe(401);
});

it("carries one request id from the gateway to the service it calls", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const res = await client(stack.baseUrl, key).get("/api/search?q=anything", {
    "X-Request-Id": "trace-0123456789",
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-request-id")).toBe("trace-0123456789");
  const logged = (service: string, path: string) =>
    stack.logs.some(
      (l) =>
        l.includes('"requestId":"trace-0123456789"') &&
        l.includes(`"service":"${service}"`) &&
        l.includes(`"path":"${path}"`),
    );
  // Each process logs a request when it has answered it: give the lines a moment to arrive.
  for (
    let i = 0;
    i < 50 && !(logged("search", "/internal/search") && logged("gateway-1", "/api/search"));
    i++
  ) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(logged("search", "/internal/search")).toBe(true);
  expect(logged("gateway-1", "/api/search")).toBe(true);
});

it("rebuilds the Postgres index from the extractions stored in S3", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const c = client(stack.baseUrl, key);
  const res = await c.upload(
    await makePdf({ pages: [pageWith("An avocet rebuilt in split mode.", 3)] }),
    "a.pdf",
  );
  const { file } = (await res.json()) as { file: { id: string } };
  await waitForFile(c, file.id);
  const rebuilt = await runCli(stack.dataDir, ["index", "rebuild"], stack.cliEnv);
  expect(rebuilt.code).toBe(0);
  expect(rebuilt.stdout).toMatch(/Rebuilt the postgres search index from \d+ stored extractions/);
  const body = (await (await c.get("/api/search?q=avocet")).json()) as { results: { file_id: string }[] };
  expect(body.results.map((r) => r.file_id)).toEqual([file.id]);
});

it("indexes a 1,000-page PDF", async () => {
  const pages = Array.from({ length: 1000 }, (_, i) =>
    i === 999
      ? pageWith("The final page mentions a solitary pangolin.", 21, 25)
      : pageWith(`Page ${i + 1}.`, 1, 25),
  );
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const c = client(stack.baseUrl, key);
  const res = await c.upload(await makePdf({ pages }), "thousand.pdf");
  const { file } = (await res.json()) as { file: { id: string } };
  expect(await waitForFile(c, file.id, 180_000)).toMatchObject({ status: "ready", page_count: 1000 });
  const body = (await (await c.get("/api/search?q=solitary%20pangolin")).json()) as {
    results: { locator: unknown }[];
  };
  expect(body.results[0]?.locator).toMatchObject({ page: 1000, line: 21, line_end: 21, source: "text" });
}, 240_000);

describe("the internal endpoints of files and search", () => {
  const gateway = new ServiceIdentity(INTERNAL_SECRET);
  const bearer = (token?: string) => (token ? { Authorization: `Bearer ${token}` } : undefined);
  const statusOf = async (url: string, token?: string, method = "GET") =>
    (await fetch(url, { method, headers: bearer(token) })).status;

  it("refuse a missing, forged, expired, replayed, wrong-audience or wrong-request token", async () => {
    const { userId } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
    const user = { id: userId! };
    const files = stack.serviceUrls.files!;
    const search = stack.serviceUrls.search!;
    const sign = (audience: string, path: string, method = "GET") =>
      gateway.sign(user.id, audience, { method, path });
    const forged = await new ServiceIdentity(randomBytes(32).toString("base64url")).sign(user.id, "files", {
      method: "GET",
      path: "/internal/files",
    });
    const past = Math.floor(Date.now() / 1000) - 300;
    const expired = await new SignJWT({ htm: "GET", htu: "/internal/files" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(user.id)
      .setAudience("locus:files")
      .setIssuer("locus:gateway")
      .setJti(randomBytes(8).toString("hex"))
      .setIssuedAt(past)
      .setExpirationTime(past + 30)
      .sign(new TextEncoder().encode(INTERNAL_SECRET));

    expect(await statusOf(`${files}/internal/files`)).toBe(401);
    expect(await statusOf(`${files}/internal/files`, forged)).toBe(401);
    expect(await statusOf(`${files}/internal/files`, expired)).toBe(401);
    expect(await statusOf(`${files}/internal/files`, await sign("search", "/internal/files"))).toBe(401);
    expect(await statusOf(`${search}/internal/search?q=x`, await sign("files", "/internal/search?q=x"))).toBe(
      401,
    );
    expect(await statusOf(`${files}/internal/files?limit=1000`, await sign("files", "/internal/files"))).toBe(
      401,
    );
    expect(await statusOf(`${files}/internal/files`, await sign("files", "/internal/files", "DELETE"))).toBe(
      401,
    );

    const good = await sign("files", "/internal/files");
    expect(await statusOf(`${files}/internal/files`, good)).toBe(200);
    expect(await statusOf(`${files}/internal/files`, good)).toBe(401);
    const query = await sign("search", "/internal/search?q=harbour");
    expect(await statusOf(`${search}/internal/search?q=harbour`, query)).toBe(200);
    expect(await statusOf(`${search}/internal/search?q=harbour`, query)).toBe(401);
    recordResilience("audit-service-tokens", {
      refused: [
        "missing",
        "forged",
        "expired",
        "wrong audience (2)",
        "wrong query",
        "wrong method",
        "replayed (2)",
      ],
      accepted: 2,
    });
  });

  it("take the user from the token only", async () => {
    const owner = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
    const stranger = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
    const c = client(stack.baseUrl, owner.key);
    const res = await c.upload(
      await makePdf({ pages: [["The lighthouse keeper logs every gale."]] }),
      "log.pdf",
    );
    const { file } = (await res.json()) as { file: { id: string } };
    await waitForFile(c, file.id);
    const files = stack.serviceUrls.files!;
    const search = stack.serviceUrls.search!;
    // The stranger's token, with the owner named every other way a caller could try.
    const path = `/internal/files/${file.id}?user_id=${owner.userId!}`;
    const asStranger = await gateway.sign(stranger.userId!, "files", { method: "GET", path });
    const read = await fetch(`${files}${path}`, {
      headers: { ...bearer(asStranger), "X-User-Id": owner.userId!, "X-Locus-User": owner.userId! },
    });
    expect(read.status).toBe(404);
    const q = `/internal/search?q=lighthouse+keeper&user_id=${owner.userId!}`;
    const found = await fetch(`${search}${q}`, {
      headers: bearer(await gateway.sign(stranger.userId!, "search", { method: "GET", path: q })),
    });
    expect(((await found.json()) as { results: unknown[] }).results).toEqual([]);
    const own = await fetch(`${search}${q}`, {
      headers: bearer(await gateway.sign(owner.userId!, "search", { method: "GET", path: q })),
    });
    expect(((await own.json()) as { results: { file_id: string }[] }).results[0]?.file_id).toBe(file.id);
    // Two CLI runs and an upload through five processes: about 30 s on a busy 2-core machine.
  }, 120_000);
});

it("keeps what Locus runs on to the internal ports: /readyz names its checks there only", async () => {
  expect(await (await fetch(`${stack.baseUrl}/readyz`)).json()).toEqual({ status: "ready" });
  expect(await (await fetch(`${stack.serviceUrls.files!}/readyz`)).json()).toEqual({
    status: "ready",
    checks: { metadata_store: "ok", blob_store: "ok", bus: "ok" },
  });
});

it("serves each internal process's metrics on its own port, where its work is counted; never on a gateway's", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const c = client(stack.baseUrl, key);
  const scrape = (service: string) => scrapeMetrics(`${stack.serviceUrls[service]!}/metrics`);
  const before = {
    files: await scrape("files"),
    extractor: await scrape("extractor-pdf"),
    indexer: await scrape("indexer"),
    search: await scrape("search"),
  };
  const res = await c.upload(
    await makePdf({ pages: [pageWith("Metrics of a lone cormorant.", 2)] }),
    "c.pdf",
  );
  const { file } = (await res.json()) as { file: { id: string } };
  expect(await waitForFile(c, file.id, 60_000)).toMatchObject({ status: "ready" });
  expect((await c.get("/api/search?q=cormorant")).status).toBe(200);

  const grew = async (service: keyof typeof before, name: string, labels: Record<string, string>) =>
    metricValue(await scrape(service === "extractor" ? "extractor-pdf" : service), name, labels) -
    metricValue(before[service], name, labels);
  expect(await grew("files", "locus_uploads_total", { kind: "pdf" })).toBe(1);
  expect(await grew("files", "locus_files_finished_total", { kind: "pdf", outcome: "ready" })).toBe(1);
  expect(
    await grew("extractor", "locus_bus_messages_total", { topic: "file.uploaded.pdf", event: "handled" }),
  ).toBe(1);
  expect(
    await grew("extractor", "locus_bus_messages_total", { topic: "file.extracted", event: "published" }),
  ).toBe(1);
  expect(
    await grew("indexer", "locus_bus_messages_total", { topic: "file.extracted", event: "handled" }),
  ).toBe(1);
  // The broker's own count of every group's queue, read by the files service at the scrape (so a
  // group whose consumers are down still has one), and by no consumer; the message's age at delivery.
  const files = await scrape("files");
  for (const group of ["indexer", "extractor-pdf", "extractor-video", "webhooks", "files-status"]) {
    expect({
      group,
      depth: files.find((s) => s.name === "locus_bus_queue_depth" && s.labels.group === group)?.value,
    }).toEqual({ group, depth: 0 });
  }
  const indexer = await scrape("indexer");
  expect(indexer.filter((s) => s.name === "locus_bus_queue_depth")).toEqual([]);
  expect(
    await grew("indexer", "locus_bus_message_age_seconds_count", {
      topic: "file.extracted",
      group: "indexer",
    }),
  ).toBe(1);
  expect(
    await grew("search", "locus_search_duration_seconds_count", {
      mode: "quick",
      backend: "postgres",
      outcome: "ok",
    }),
  ).toBe(1);
  for (const gateway of stack.gatewayUrls) {
    const res = await fetch(`${gateway}/metrics`);
    expect(res.status).toBe(404);
    await res.text();
  }
});

it("a real Prometheus scrapes every process, the gateways too, where the launcher's scrape config says, and answers PromQL about a file just processed", async () => {
  // The launcher's scrape config: a target per process, each on a metrics port of its own.
  const written = readFileSync(join(stack.dataDir, "prometheus-scrape.yml"), "utf8");
  const targets = [...written.matchAll(/targets: \["([^"]+)"\]\n\s+labels: \{ instance: "([^"]+)"/g)].map(
    ([, address = "", name = ""]) => [name, address] as const,
  );
  expect(targets.map(([name]) => name).sort()).toEqual(Object.keys(stack.serviceUrls).sort());
  expect(new Set(targets.map(([, address]) => address)).size).toBe(targets.length);
  const internal = targets;
  const prometheus = await startPrometheus(Object.fromEntries(targets));
  try {
    const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
    const c = client(stack.baseUrl, key);
    const res = await c.upload(
      await makePdf({ pages: [pageWith("Prometheus watched a heron.", 2)] }),
      "h.pdf",
    );
    const { file } = (await res.json()) as { file: { id: string } };
    expect(await waitForFile(c, file.id, 60_000)).toMatchObject({ status: "ready" });
    // What the files service counts now, Prometheus must come to say (it scrapes every second).
    const finished = metricValue(
      await scrapeMetrics(`${stack.serviceUrls.files!}/metrics`),
      "locus_files_finished_total",
      {
        kind: "pdf",
        outcome: "ready",
      },
    );
    const deadline = Date.now() + 20_000;
    const answer = async () => ({
      up: (await prometheus.query("up")).map((s) => [s.labels.service, s.value]).sort(),
      finished: (await prometheus.query('sum(locus_files_finished_total{kind="pdf",outcome="ready"})'))[0]
        ?.value,
      handledBy: (
        await prometheus.query(
          'sum by (service) (locus_bus_messages_total{event="handled",topic="file.extracted"})',
        )
      )
        .map((s) => s.labels.service)
        .sort(),
      extractions: (
        await prometheus.query('sum(locus_file_stage_seconds_count{kind="pdf",stage="extraction"})')
      )[0]?.value,
    });
    let seen = await answer();
    while (((seen.finished ?? 0) < finished || seen.up.length < internal.length) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await answer();
    }
    expect(seen.up).toEqual(internal.map(([name]) => [name, 1]).sort());
    expect(seen.finished).toBe(finished);
    expect(seen.handledBy).toEqual(["indexer"]);
    expect(seen.extractions).toBeGreaterThanOrEqual(1);
  } finally {
    await prometheus.stop();
  }
});

// Four CLI runs (each a process that compiles its sources at start) and a retry awaited up to 60 s.
it("the CLI, on the deployment's settings: status of every dependency and queue, a failed file retried, dead letters listed", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const c = client(stack.baseUrl, key);
  const pdf = await makePdf({ pages: [pageWith("Half of a document.", 2), pageWith("The rest.", 3)] });
  const res = await c.upload(pdf.subarray(0, Math.floor(pdf.length / 2)), "half.pdf");
  const { file } = (await res.json()) as { file: { id: string } };
  const failed = await waitForFile(c, file.id, 60_000);
  expect(failed).toMatchObject({ status: "failed", error: { code: "pdf_corrupt" } });

  const status = await runCli(stack.dataDir, ["status"], stack.cliEnv);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(
    /records in postgres, files in s3, messages on rabbitmq, passages in postgres/,
  );
  for (const dependency of ["metadata_store", "blob_store", "bus", "search_index"]) {
    expect(status.stdout).toMatch(new RegExp(`${dependency} +ok`));
  }
  // Every group's work queue a quorum queue: a message that kills every worker cannot loop.
  // Waiting, consumers (one extractor-pdf process), dead letters, queue type.
  expect(status.stdout).toMatch(/GROUP +WAITING +CONSUMERS +DEAD LETTERS +QUEUE TYPE/);
  expect(status.stdout).toMatch(/extractor-pdf +\d+ +1 +\d+ +quorum/);
  expect(status.stdout).not.toMatch(/classic/);
  expect(status.stdout).toContain(file.id);
  // The shape named instead of each adapter: the same deployment, not embedded parts beside it.
  const adapters = ["LOCUS_BUS", "LOCUS_METADATA_STORE", "LOCUS_SEARCH_INDEX", "LOCUS_BLOB_STORE"];
  const byShape = await runCli(stack.dataDir, ["status"], {
    ...Object.fromEntries(Object.entries(stack.cliEnv).filter(([name]) => !adapters.includes(name))),
    LOCUS_SHAPE: "split",
  });
  expect(byShape.code).toBe(0);
  expect(byShape.stdout).toMatch(
    /records in postgres, files in s3, messages on rabbitmq, passages in postgres/,
  );
  const migrated = await runCli(stack.dataDir, ["bus", "migrate-queues"], stack.cliEnv);
  expect(migrated.code).toBe(0);
  expect(migrated.stdout).toMatch(/extractor-audio: a quorum queue already/);

  const retried = await runCli(stack.dataDir, ["files", "retry", file.id], stack.cliEnv);
  expect(retried.code).toBe(0);
  expect(retried.stdout).toMatch(/Queued .* for extraction again/);
  // Extracted again from its original (and failing again, for the same reason), later than before.
  const deadline = Date.now() + 60_000;
  let again = (await (await c.get(`/api/files/${file.id}`)).json()) as { status: string; updated_at: string };
  while (
    (again.status !== "failed" || again.updated_at <= (failed.updated_at as string)) &&
    Date.now() < deadline
  ) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    again = (await (await c.get(`/api/files/${file.id}`)).json()) as { status: string; updated_at: string };
  }
  expect(again.status).toBe("failed");
  expect(again.updated_at > (failed.updated_at as string)).toBe(true);

  const letters = await runCli(stack.dataDir, ["dead-letters", "list", "--group", "indexer"], stack.cliEnv);
  expect(letters.code).toBe(0);
  expect(letters.stdout).toMatch(/No dead letters|dead letters \(up to 100 per group\)/);
}, 180_000);

it("leaves nothing behind of files deleted while they are extracted or indexed", async () => {
  const { key } = await createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv });
  const c = client(stack.baseUrl, key);
  const pdf = await makePdf({
    pages: Array.from({ length: 120 }, (_, i) => pageWith(`Cormorant ledger entry ${i}`, 3, 8)),
  });
  // Deleted at different moments: queued, extracting, writing its extraction, being indexed.
  const ids: string[] = [];
  await Promise.all(
    [0, 300, 700, 1200, 1800, 2600].map(async (delayMs, i) => {
      const res = await c.upload(pdf, `cormorants-${i}.pdf`);
      const { file } = (await res.json()) as { file: { id: string } };
      ids.push(file.id);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const deleted = await c.del(`/api/files/${file.id}`);
      // With its body: a refusal's detail names the dependency that refused.
      expect({ status: deleted.status, body: await deleted.text() }).toEqual({
        status: 200,
        body: expect.any(String),
      });
    }),
  );
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  const leftovers = async () => {
    const keys = (await stack.bucketKeys()).filter((k) => ids.some((id) => k.includes(id)));
    const rows = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${stack.schema}".passages WHERE file_id = ANY($1)`,
      [ids],
    );
    return { keys, passages: Number(rows.rows[0]?.n ?? 0) };
  };
  try {
    // The pipeline finishes what it had in hand; then nothing of those files may remain.
    let left = await leftovers();
    for (let i = 0; i < 60 && (left.keys.length > 0 || left.passages > 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      left = await leftovers();
    }
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(await leftovers()).toEqual({ keys: [], passages: 0 });
    recordResilience("audit-deleted-mid-processing", {
      files: ids.length,
      objects_left: 0,
      passages_left: 0,
    });
    for (const id of ids) expect((await c.get(`/api/files/${id}`)).status).toBe(404);
  } finally {
    await db.end();
  }
}, 180_000);
