import { FILE_KINDS, FileFailureCodes, MessageSchemas } from "@locus/contracts";
import { LocusMetrics } from "../src/index.ts";

/**
 * The metrics the extractors, OCR, speech, the indexer and the vector cache report through their
 * observers: what each report adds, under which labels. (Every metric moving after a real upload
 * is metrics.e2e's.)
 */
let metrics: LocusMetrics;
beforeEach(() => {
  metrics = new LocusMetrics({ processMetrics: false });
});

/** The sum of the samples named `name` (a histogram's `_count` or `_sum` too) whose labels include `labels`. */
async function valueOf(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric =
    metrics.registry.getSingleMetric(name) ??
    metrics.registry.getSingleMetric(name.replace(/_(count|sum)$/, ""));
  if (!metric) throw new Error(`no metric ${name}`);
  const data = await metric.get();
  return (
    data.values
      // A histogram's values name their series (`_bucket`, `_sum`, `_count`); a counter's do not.
      .filter((v) => ((v as { metricName?: string }).metricName ?? data.name) === name)
      .filter((v) =>
        Object.entries(labels).every(
          ([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want,
        ),
      )
      .reduce((sum, v) => sum + v.value, 0)
  );
}

it("counts a PDF's and an image's pages, and a recording's seconds, by kind", async () => {
  metrics.fileExtracted("pdf", { pageCount: 12 });
  metrics.fileExtracted("pdf", { pageCount: 3 });
  metrics.fileExtracted("image", { pageCount: 1 });
  metrics.fileExtracted("audio", { pageCount: null, durationS: 93.5 });
  metrics.fileExtracted("video", { pageCount: null, durationS: 30 });
  expect(await valueOf("locus_extracted_pages_total", { kind: "pdf" })).toBe(15);
  expect(await valueOf("locus_extracted_pages_total", { kind: "image" })).toBe(1);
  // Recordings have no pages: no series of theirs.
  expect(await valueOf("locus_extracted_pages_total", { kind: "audio" })).toBe(0);
  expect(await valueOf("locus_extracted_audio_seconds_total", { kind: "audio" })).toBe(93.5);
  expect(await valueOf("locus_extracted_audio_seconds_total", { kind: "video" })).toBe(30);
  expect(await valueOf("locus_extracted_audio_seconds_total", { kind: "pdf" })).toBe(0);
});

it("times each image read by engine and outcome", async () => {
  metrics.imageRecognised("native", "ok", 1.5);
  metrics.imageRecognised("native", "ok", 0.5);
  metrics.imageRecognised("wasm", "error", 120);
  expect(await valueOf("locus_ocr_duration_seconds_count", { engine: "native", outcome: "ok" })).toBe(2);
  expect(await valueOf("locus_ocr_duration_seconds_sum", { engine: "native", outcome: "ok" })).toBe(2);
  expect(await valueOf("locus_ocr_duration_seconds_count", { engine: "wasm", outcome: "error" })).toBe(1);
});

it("times each chunk of speech, and counts the seconds of sound only of chunks the engine answered", async () => {
  metrics.chunkTranscribed("pocketsphinx", "ok", 6, 30);
  metrics.chunkTranscribed("pocketsphinx", "ok", 3, 20);
  metrics.chunkTranscribed("pocketsphinx", "error", 1, 25);
  expect(await valueOf("locus_speech_duration_seconds_count", { engine: "pocketsphinx" })).toBe(3);
  // The real-time factor, as a dashboard computes it: engine seconds per second of sound.
  const engineSeconds = await valueOf("locus_speech_duration_seconds_sum", { outcome: "ok" });
  const soundSeconds = await valueOf("locus_speech_audio_seconds_total", { engine: "pocketsphinx" });
  expect(soundSeconds).toBe(50);
  expect(engineSeconds / soundSeconds).toBeCloseTo(0.18);
});

it("counts the passages indexed by kind, the vector cache's hits and misses, and how vectors were searched", async () => {
  metrics.passagesIndexed("pdf", 40);
  metrics.passagesIndexed("pdf", 2);
  metrics.passagesIndexed("audio", 7);
  metrics.vectorCacheLookedUp("miss");
  metrics.vectorCacheLookedUp("hit");
  metrics.vectorCacheLookedUp("hit");
  metrics.vectorSearched("exact");
  metrics.vectorSearched("approximate");
  metrics.vectorSearched("approximate");
  expect(await valueOf("locus_index_passages_written_total", { kind: "pdf" })).toBe(42);
  expect(await valueOf("locus_index_passages_written_total", { kind: "audio" })).toBe(7);
  expect(await valueOf("locus_vector_cache_lookups_total", { result: "hit" })).toBe(2);
  expect(await valueOf("locus_vector_cache_lookups_total", { result: "miss" })).toBe(1);
  expect(await valueOf("locus_vector_searches_total", { method: "approximate" })).toBe(2);
  expect(await valueOf("locus_vector_searches_total", { method: "exact" })).toBe(1);
});

it("exposes every new metric with its help and type, in Prometheus's text format", async () => {
  const { body } = await metrics.exposition();
  for (const [name, type] of [
    ["locus_extracted_pages_total", "counter"],
    ["locus_extracted_audio_seconds_total", "counter"],
    ["locus_ocr_duration_seconds", "histogram"],
    ["locus_speech_duration_seconds", "histogram"],
    ["locus_speech_audio_seconds_total", "counter"],
    ["locus_index_passages_written_total", "counter"],
    ["locus_vector_cache_lookups_total", "counter"],
    ["locus_vector_searches_total", "counter"],
  ]) {
    expect(body).toContain(`# TYPE ${name} ${type}`);
    expect(body).toMatch(new RegExp(`# HELP ${name} \\S`));
  }
});

it("times webhook attempts by outcome", async () => {
  metrics.webhookAttempted("delivered", 0.05);
  metrics.webhookAttempted("failed", 2);
  metrics.webhookAttempted("failed", 1);
  expect(await valueOf("locus_webhook_attempt_seconds_count", { outcome: "delivered" })).toBe(1);
  expect(await valueOf("locus_webhook_attempt_seconds_count", { outcome: "failed" })).toBe(2);
  expect(await valueOf("locus_webhook_attempt_seconds_sum", { outcome: "failed" })).toBe(3);
});

/** The series of counter or gauge `name` there are now (a series at 0 included), with their values. */
async function seriesOf(name: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values.map((v) => ({
    labels: Object.fromEntries(Object.entries(v.labels).map(([k, l]) => [k, String(l)])),
    value: v.value,
  }));
}

it("has every topic's dead-letter count at 0 from the start, so Prometheus sees the first one as an increase", async () => {
  const deadLetters = (await seriesOf("locus_bus_messages_total")).filter(
    (s) => s.labels.event === "dead_lettered",
  );
  expect(deadLetters.map((s) => s.labels.topic).sort()).toEqual(Object.keys(MessageSchemas).sort());
  expect(deadLetters.every((s) => s.value === 0)).toBe(true);
  metrics.deliveryAbandoned("file.uploaded.pdf");
  expect(
    await valueOf("locus_bus_messages_total", { topic: "file.uploaded.pdf", event: "dead_lettered" }),
  ).toBe(1);
});

it("has every kind's finished files at 0 for `ready` and each failure code, in the process that finishes files", async () => {
  // Other processes do not carry 145 series that would stay at 0.
  expect(await seriesOf("locus_files_finished_total")).toEqual([]);
  metrics.countFileOutcomesFromZero();
  const finished = await seriesOf("locus_files_finished_total");
  expect(finished).toHaveLength(FILE_KINDS.length * (1 + FileFailureCodes.length));
  expect(finished.every((s) => s.value === 0)).toBe(true);
  expect(finished).toContainEqual({ labels: { kind: "audio", outcome: "speech_incomplete" }, value: 0 });
  metrics.fileFinished("pdf", "pdf_corrupt", 3);
  expect(await valueOf("locus_files_finished_total", { kind: "pdf", outcome: "pdf_corrupt" })).toBe(1);
});

it("labels each stage of a file in snake_case, as every other label value", async () => {
  metrics.stagesTook("pdf", { waited: 1, extraction: 2, indexWaited: 0.5, indexing: 0.25 });
  const stages = (await seriesOf("locus_file_stage_seconds"))
    .filter((s) => s.labels.le === "+Inf")
    .map((s) => s.labels.stage);
  expect(stages).toEqual(["waited", "extraction", "index_waited", "indexing"]);
});
