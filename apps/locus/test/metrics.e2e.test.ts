import {
  client,
  createUserWithKey,
  makePdf,
  metricValue,
  pageWith,
  removeDataDir,
  scrapeMetrics,
  startLocus,
  waitForFile,
  type LocusProcess,
  type Sample,
} from "@locus/testing";

/**
 * Prometheus metrics of the all-in-one process: its public port keeps them to itself, and
 * LOCUS_METRICS_PORT serves them (the split shape's internal processes serve them on their own
 * port: see split.e2e).
 */
let locus: LocusProcess;
let metricsUrl: string;

beforeAll(async () => {
  locus = await startLocus({ env: { LOCUS_METRICS_PORT: "0" } });
  const deadline = Date.now() + 10_000;
  let found: RegExpExecArray | null = null;
  while (!found && Date.now() < deadline) {
    found = locus.logs.map((line) => /"metricsUrl":"([^"]+)"/.exec(line)).find(Boolean) ?? null;
    if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!found?.[1]) throw new Error(`no metricsUrl in the start line:\n${locus.logs.join("\n")}`);
  metricsUrl = found[1];
}, 60_000);

afterAll(async () => {
  await locus.stop();
  removeDataDir(locus.dataDir);
});

it("keeps /metrics off the public port", async () => {
  const res = await fetch(`${locus.baseUrl}/metrics`);
  expect(res.status).toBe(404);
  await res.text();
});

it("counts an upload, its file's pipeline and a search, by route, kind, topic and mode, never by id", async () => {
  const before = await scrapeMetrics(metricsUrl);
  const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
  const c = client(locus.baseUrl, key);
  const pdf = await makePdf({ pages: [pageWith("A census of the harbour's pelicans.", 3)] });
  const res = await c.upload(pdf, "pelicans.pdf");
  expect(res.status).toBe(200);
  const { file } = (await res.json()) as { file: { id: string } };
  expect(await waitForFile(c, file.id)).toMatchObject({ status: "ready" });
  expect((await c.get("/api/search?q=pelicans")).status).toBe(200);
  expect((await c.get(`/api/files/${file.id}`)).status).toBe(200);
  expect((await fetch(`${locus.baseUrl}/api/files`)).status).toBe(401);
  expect((await c.get("/api/files/3f2504e0-4f89-11d3-9a0c-0305e82c3301")).status).toBe(404);

  const after = await scrapeMetrics(metricsUrl);
  const grew = (name: string, labels: Record<string, string>) =>
    metricValue(after, name, labels) - metricValue(before, name, labels);

  expect(grew("locus_uploads_total", { kind: "pdf" })).toBe(1);
  expect(grew("locus_files_finished_total", { kind: "pdf", outcome: "ready" })).toBe(1);
  expect(grew("locus_file_processing_seconds_count", { kind: "pdf", outcome: "ready" })).toBe(1);
  for (const stage of ["waited", "extraction", "indexWaited", "indexing"]) {
    expect({ stage, grew: grew("locus_file_stage_seconds_count", { kind: "pdf", stage }) }).toEqual({
      stage,
      grew: 1,
    });
  }
  // The "file ready" line says how long each stage took.
  const ready = locus.logs.find((line) => line.includes(file.id) && line.includes('"msg":"file ready"'));
  expect(ready).toMatch(
    /"stages":\{"waited":[\d.]+,"extraction":[\d.]+,"indexWaited":[\d.]+,"indexing":[\d.]+\}/,
  );
  expect(grew("locus_bus_messages_total", { topic: "file.uploaded.pdf", event: "published" })).toBe(1);
  expect(grew("locus_bus_messages_total", { topic: "file.uploaded.pdf", event: "handled" })).toBe(1);
  expect(
    grew("locus_bus_messages_total", { topic: "file.indexed", event: "handled" }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    grew("locus_bus_handler_duration_seconds_count", { topic: "file.extracted", group: "indexer" }),
  ).toBe(1);
  expect(
    grew("locus_bus_message_age_seconds_count", { topic: "file.uploaded.pdf", group: "extractor-pdf" }),
  ).toBe(1);
  expect(after.find((s) => s.name === "locus_files_stalled")?.value).toBe(0);
  // Every group this process consumes for has its queue's depth; nothing is left waiting.
  for (const group of ["extractor-pdf", "extractor-image", "indexer", "files-status"]) {
    expect(after.find((s) => s.name === "locus_bus_queue_depth" && s.labels.group === group)?.value).toBe(0);
  }
  expect(
    grew("locus_search_duration_seconds_count", { mode: "quick", backend: "sqlite", outcome: "ok" }),
  ).toBe(1);
  expect(grew("locus_auth_failures_total", { reason: "missing" })).toBe(1);
  const answered = (route: string, status: string) => grew("locus_http_requests_total", { route, status });
  expect(answered("/api/files/upload", "200")).toBe(1);
  expect(answered("/api/search", "200")).toBe(1);
  expect(answered("/api/files/:file_id", "200")).toBeGreaterThanOrEqual(1);
  expect(answered("/api/files/:file_id", "404")).toBe(1);
  expect(grew("locus_http_request_duration_seconds_count", { route: "/api/search" })).toBe(1);
  // The process's own: CPU, memory, event loop.
  expect(metricValue(after, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
  expect(metricValue(after, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);

  // Bounded labels: no file id, key, user id or query text in any of them.
  const labelValues = (samples: Sample[]) => samples.flatMap((s) => Object.values(s.labels));
  for (const value of labelValues(after)) {
    expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(value).not.toMatch(/sk_(live|test)_|pelican/);
  }
}, 120_000);

it("counts rate-limited requests by plan", async () => {
  const { key } = await createUserWithKey(locus.dataDir, { plan: "free" });
  const c = client(locus.baseUrl, key);
  const before = metricValue(await scrapeMetrics(metricsUrl), "locus_rate_limited_total", { plan: "free" });
  // More than the free plan's per-second limit at once: some are refused.
  const statuses = await Promise.all(
    Array.from({ length: 40 }, async () => (await c.get("/api/files")).status),
  );
  const refused = statuses.filter((s) => s === 429).length;
  expect(refused).toBeGreaterThan(0);
  const after = metricValue(await scrapeMetrics(metricsUrl), "locus_rate_limited_total", { plan: "free" });
  expect(after - before).toBe(refused);
});
