import { CONSUMER_GROUPS } from "@locus/contracts";
import {
  client,
  createUserWithKey,
  makePdf,
  makeTextImage,
  metricValue,
  pageWith,
  recording,
  removeDataDir,
  scrapeMetrics,
  speak,
  startLocus,
  uploadAndWait,
  waitForFile,
  waitForMeaning,
  type Client,
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

/** One pro user's client, made on first use and shared: each user made costs two CLI runs. */
let proClient: Promise<Client> | undefined;
const pro = () =>
  (proClient ??= createUserWithKey(locus.dataDir, { plan: "pro" }).then(({ key }) =>
    client(locus.baseUrl, key),
  ));

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
  const c = await pro();
  const pdf = await makePdf({ pages: [pageWith("A census of the harbour's pelicans.", 3)] });
  const res = await c.upload(pdf, "pelicans.pdf");
  expect(res.status).toBe(200);
  const { file } = (await res.json()) as { file: { id: string } };
  const ready = await waitForFile(c, file.id);
  expect(ready).toMatchObject({ status: "ready", page_count: 1 });
  // And encoded by the meaning stage (after ready), whose report to the files module would
  // otherwise still be queued when the queues are read below.
  expect((await waitForMeaning(c, file.id)).ai_vectors).toBe("ready");
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
  for (const stage of ["waited", "extraction", "index_waited", "indexing"]) {
    expect({ stage, grew: grew("locus_file_stage_seconds_count", { kind: "pdf", stage }) }).toEqual({
      stage,
      grew: 1,
    });
  }
  expect(grew("locus_extracted_pages_total", { kind: "pdf" })).toBe(1);
  expect(grew("locus_index_passages_written_total", { kind: "pdf" })).toBe(ready.passage_count);
  // The "file ready" line says how long each stage took.
  const readyLine = locus.logs.find((line) => line.includes(file.id) && line.includes('"msg":"file ready"'));
  expect(readyLine).toMatch(
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
  // Every consumer group's queue has its depth (the files module reads them all); nothing is left waiting.
  for (const group of Object.keys(CONSUMER_GROUPS)) {
    expect({
      group,
      depth: after.find((s) => s.name === "locus_bus_queue_depth" && s.labels.group === group)?.value,
    }).toEqual({ group, depth: 0 });
  }
  // Failures and dead letters not seen yet are already series, at 0: the first one is an increase.
  expect(
    after.find(
      (s) =>
        s.name === "locus_files_finished_total" &&
        s.labels.kind === "video" &&
        s.labels.outcome === "media_corrupt",
    )?.value,
  ).toBe(0);
  expect(
    after.find(
      (s) =>
        s.name === "locus_bus_messages_total" &&
        s.labels.topic === "file.uploaded.video" &&
        s.labels.event === "dead_lettered",
    )?.value,
  ).toBe(0);
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

it("counts the images, pages and seconds of sound read, OCR and speech times, passages indexed and vector cache lookups", async () => {
  const c = await pro();
  const before = await scrapeMetrics(metricsUrl);
  const image = await makeTextImage({ lines: ["Gannets nest on the northern cliffs."] });
  const spoken = recording([1, await speak("Welcome to the quarterly planning meeting."), 1]);
  const [scan, talk] = await Promise.all([
    uploadAndWait(c, image.data, "gannets.png"),
    uploadAndWait(c, spoken, "meeting.wav"),
  ]);
  expect(scan).toMatchObject({ status: "ready", page_count: 1 });
  expect(talk).toMatchObject({ status: "ready" });
  // The first ai search reads the user's vectors into memory; the second finds them there.
  for (const q of ["cliffs where gannets nest", "the planning meeting"])
    expect((await c.get(`/api/search?q=${encodeURIComponent(q)}&mode=ai`)).status).toBe(200);
  const after = await scrapeMetrics(metricsUrl);
  const grew = (name: string, labels: Record<string, string>) =>
    metricValue(after, name, labels) - metricValue(before, name, labels);

  expect(grew("locus_extracted_pages_total", { kind: "image" })).toBe(1);
  expect(grew("locus_extracted_audio_seconds_total", { kind: "audio" })).toBeCloseTo(talk.duration_s ?? 0, 1);
  // One image read by whichever engine this machine has (the tesseract command or tesseract.js):
  // once, or twice when its print is small enough to be read again scaled up.
  expect(grew("locus_ocr_duration_seconds_count", { outcome: "ok" })).toBeGreaterThanOrEqual(1);
  expect(grew("locus_ocr_duration_seconds_count", { outcome: "ok" })).toBeLessThanOrEqual(2);
  const engines = after
    .filter((s) => s.name === "locus_ocr_duration_seconds_count")
    .map((s) => s.labels.engine);
  expect(engines.every((engine) => engine === "native" || engine === "wasm")).toBe(true);
  expect(grew("locus_ocr_duration_seconds_sum", { outcome: "ok" })).toBeGreaterThan(0);
  // The recording's sound in one chunk or a few, each timed once (by the default engine); the seconds heard are the real-time factor's divisor.
  expect(
    grew("locus_speech_duration_seconds_count", { engine: "moonshine", outcome: "ok" }),
  ).toBeGreaterThanOrEqual(1);
  expect(grew("locus_speech_audio_seconds_total", { engine: "moonshine" })).toBeGreaterThan(2);
  expect(grew("locus_speech_audio_seconds_total", { engine: "moonshine" })).toBeLessThanOrEqual(
    (talk.duration_s ?? 0) + 0.5,
  );
  expect(grew("locus_index_passages_written_total", { kind: "image" })).toBe(scan.passage_count);
  expect(grew("locus_index_passages_written_total", { kind: "audio" })).toBe(talk.passage_count);
  expect(grew("locus_vector_cache_lookups_total", { result: "miss" })).toBe(1);
  expect(grew("locus_vector_cache_lookups_total", { result: "hit" })).toBe(1);
  // A handful of passages: scanned, far below LOCUS_VECTOR_INDEX_MIN.
  expect(grew("locus_vector_searches_total", { method: "exact" })).toBe(2);
  expect(grew("locus_vector_searches_total", { method: "approximate" })).toBe(0);
}, 120_000);

it("says in the file failed line how long the file waited and was read before the extractor refused it", async () => {
  const c = await pro();
  const pdf = await makePdf({ pages: [pageWith("Half of a report.", 2)] });
  const failed = await uploadAndWait(c, pdf.subarray(0, Math.floor(pdf.length / 2)), "half.pdf");
  expect(failed).toMatchObject({ status: "failed", error: { code: "pdf_corrupt" } });
  const line = locus.logs.find((l) => l.includes(failed.id) && l.includes('"msg":"file failed"'));
  expect(line).toMatch(/"stages":\{"waited":[\d.]+,"extraction":[\d.]+\}/);
});

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
