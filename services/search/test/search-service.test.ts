import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FileStatus, SearchResponseDto } from "@locus/contracts";
import { isZero, LocalEmbedder, loadWordVectors, OpenAiEmbedder } from "@locus/embedder";
import { createSqliteMetadataStore, type KyselyMetadataStore } from "@locus/metadata-store";
import { joinWindow, windowLines, type NumberedLine } from "@locus/passages";
import { createLogger } from "@locus/runtime";
import { SqliteSearchIndex, type IndexedPassage } from "@locus/search-index";
import { ExtractiveSummarizer, NO_ANSWER, OpenAiSummarizer, type Summarizer } from "@locus/summarizer";
import { SearchService, type AiEngines, type SearchRequest } from "../src/index.ts";

/**
 * Search over a small SQLite index filled as the indexer fills it (the extractor's windows of
 * lines, each with its local vector), with the records in a SQLite store: the shape of quick and ai
 * answers, what ai mode does when a remote engine is configured and fails (a real OpenAI client
 * against a server that refuses or answers 500), and that no answer ever shows another user's
 * passages.
 */
const logger = createLogger("test", "silent");
let dir: string;
let store: KyselyMetadataStore;
let index: SqliteSearchIndex;
let local: LocalEmbedder;
let localSummarizer: Summarizer;
let failingServer: Server;
/** An OpenAI-compatible server that answers every request with a 500 naming an internal host. */
let failingUrl: string;
let failingServerRequests = 0;
/** Where nothing listens: connections are refused. */
let unreachableUrl: string;
const SERVER_SECRET = "gpu-node-7.internal.example for org-Secret42";

let alice: string;
let bob: string;
let carol: string;
const fileIds: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-search-service-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  index = new SqliteSearchIndex(join(dir, "index.sqlite"));
  local = new LocalEmbedder(await loadWordVectors());
  // As the server makes it (apps/locus infrastructure), without the optional word list.
  localSummarizer = new ExtractiveSummarizer(local, {
    wordWeight: (word) => local.weight(word),
    wordVector: (word) => local.wordVector(word),
  });

  failingServer = createServer((req, res) => {
    failingServerRequests += 1;
    req.resume();
    req.on("end", () => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `The server had an error on ${SERVER_SECRET}.` } }));
    });
  });
  await new Promise<void>((resolve) => failingServer.listen(0, "127.0.0.1", resolve));
  failingUrl = `http://127.0.0.1:${(failingServer.address() as AddressInfo).port}/v1`;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  unreachableUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));

  alice = (await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" })).id;
  bob = (await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" })).id;
  carol = (await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" })).id;

  fileIds.refunds = await indexFile(alice, "refunds.pdf", [
    "Returns and refunds",
    "Items can be returned within thirty days of delivery.",
    "Refunds are paid to the original card within five working days.",
    "Shipping costs are not refunded unless the item arrived damaged.",
    "Keep the receipt: a refund needs proof of purchase.",
    "Gift cards cannot be exchanged for cash.",
  ]);
  fileIds.garden = await indexFile(alice, "garden.pdf", [
    "Caring for tomatoes",
    "Water tomato plants deeply twice a week in dry weather.",
    "Pinch out the side shoots so the plant puts its energy into the fruit.",
    "Feed with a potash-rich fertiliser once the first flowers appear.",
  ]);
  // Being re-indexed: its passages are in the index, but search must not name it yet.
  fileIds.unfinished = await indexFile(
    alice,
    "unfinished.pdf",
    ["The zeppelin hangar was demolished in nineteen thirty."],
    "processing",
  );
  // Bob's documents: one shares alice's words, one is about something alice has nothing on.
  fileIds.bobRefunds = await indexFile(bob, "bob-refunds.pdf", [
    "Refunds are paid to the original card within five working days.",
    "Bob's shop refunds shipping costs in every case.",
  ]);
  fileIds.ferry = await indexFile(bob, "ferry.pdf", [
    "Island timetable",
    "The ferry to the island leaves the harbour every morning at seven.",
    "Boats return from the island at six in the evening.",
  ]);
});

afterAll(async () => {
  await new Promise<void>((resolve) => failingServer.close(() => resolve()));
  await index.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Records the file and indexes its lines on page 1 as the PDF extractor and the indexer do: windows
 * of lines sharing one, each passage with its local vector.
 */
async function indexFile(userId: string, name: string, lines: string[], status: FileStatus = "ready") {
  const fileId = randomUUID();
  const now = new Date().toISOString();
  await store.createFile({
    id: fileId,
    userId,
    originalName: name,
    fileType: "pdf",
    mimeType: "application/pdf",
    sizeBytes: 1000,
    blobKey: `files/${userId}/${fileId}`,
    status,
    error: null,
    pageCount: 1,
    durationS: null,
    passageCount: null,
    progress: status === "ready" ? 1 : 0.9,
    metadata: {},
    createdAt: now,
    updatedAt: now,
  });
  const numbered: NumberedLine[] = lines.map((text, i) => ({ text, number: i + 1 }));
  const windows = windowLines(numbered);
  const contents = windows.map(joinWindow);
  const vectors = await local.embed(contents);
  const passages: IndexedPassage[] = windows.map((window, i) => {
    const vector = vectors[i]!;
    return {
      content: contents[i]!,
      locator: { page: 1, line: window[0]!.number, line_end: window.at(-1)!.number, source: "text" },
      vectors: isZero(vector) ? {} : { local: { space: local.space, vector } },
    };
  });
  async function* stream() {
    for (const p of passages) yield await Promise.resolve(p);
  }
  await index.replaceFilePassages({ userId, fileId }, stream());
  return fileId;
}

const engines = (remote: { embedder?: string; summarizer?: string } = {}): AiEngines => ({
  embedders: {
    local,
    ...(remote.embedder
      ? {
          remote: new OpenAiEmbedder({
            baseURL: remote.embedder,
            apiKey: "sk-test",
            model: "text-embedding-3-small",
            timeoutMs: 2000,
            maxRetries: 0,
          }),
        }
      : {}),
  },
  summarizers: {
    local: localSummarizer,
    ...(remote.summarizer
      ? {
          remote: new OpenAiSummarizer({
            baseURL: remote.summarizer,
            apiKey: "sk-test",
            model: "gpt-4o-mini",
            timeoutMs: 2000,
            maxRetries: 0,
          }),
        }
      : {}),
  },
});

const search = (request: Partial<SearchRequest> & Pick<SearchRequest, "userId" | "q">, ai = engines()) =>
  new SearchService(index, store, ai, logger).search({ limit: 10, mode: "quick", ...request });

/** The text a highlight covers (offsets count code points). */
const highlighted = (content: string, h: { start: number; end: number }) =>
  Array.from(content).slice(h.start, h.end).join("");

const fileIdsOf = (response: SearchResponseDto) => new Set(response.results.map((r) => r.file_id));

describe("quick mode", () => {
  it("answers with the matching passages, each with its file, place, score and the matched words", async () => {
    const response = await search({ userId: alice, q: "refunds" });
    expect(response.mode).toBe("quick");
    expect(response.count).toBe(response.results.length);
    expect(response.results.length).toBeGreaterThan(0);
    for (const result of response.results) {
      expect(result.file_id).toBe(fileIds.refunds);
      expect(result.files).toEqual({ original_name: "refunds.pdf", file_type: "pdf" });
      expect(result.score).toBeGreaterThan(0);
      expect(result.score).toBeLessThanOrEqual(1);
      expect(result.locator).toMatchObject({ page: 1, source: "text" });
      expect(result.locator.line).toBeGreaterThanOrEqual(1);
      expect(result.highlights.length).toBeGreaterThan(0);
      for (const h of result.highlights)
        expect(highlighted(result.content, h).toLowerCase()).toMatch(/^refund/);
    }
    // Scores best first.
    const scores = response.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // No ai fields in quick mode.
    expect(Object.keys(response).sort()).toEqual(["count", "mode", "next_cursor", "next_offset", "results"]);
  });

  it("gives at most `limit` results", async () => {
    const response = await search({ userId: alice, q: "refunds", limit: 1 });
    expect(response.results).toHaveLength(1);
    expect(response.count).toBe(1);
  });

  it("pages one ranking with offset: the pages in a row are the long list, next_offset null at its end", async () => {
    const whole = await search({ userId: alice, q: "refunds shipping", limit: 100 });
    expect(whole.count).toBeGreaterThan(1);
    expect(whole.next_offset).toBeNull();
    const paged: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page: SearchResponseDto = await search({
        userId: alice,
        q: "refunds shipping",
        limit: 2,
        offset,
      });
      expect(page.count).toBe(page.results.length);
      paged.push(...page.results.map((r) => r.content));
      offset = page.next_offset;
    }
    expect(paged).toEqual(whole.results.map((r) => r.content));
  });

  it("asks the index for the filtered passages only (a filter naming another file finds none of these)", async () => {
    const filtered = await search({ userId: alice, q: "refunds", filter: { fileIds: [fileIds.refunds!] } });
    expect(fileIdsOf(filtered)).toEqual(new Set([fileIds.refunds]));
    const elsewhere = await search({
      userId: alice,
      q: "refunds",
      filter: { fileIds: [fileIds.bobRefunds!] },
    });
    expect(elsewhere.results).toEqual([]);
  });

  it("never shows another user's passages, though they hold the same words", async () => {
    const forAlice = await search({ userId: alice, q: "refunds shipping" });
    expect(fileIdsOf(forAlice)).toEqual(new Set([fileIds.refunds]));
    const forBob = await search({ userId: bob, q: "refunds shipping" });
    expect(fileIdsOf(forBob)).toEqual(new Set([fileIds.bobRefunds]));
    // Words only bob's documents have find nothing for alice.
    expect((await search({ userId: alice, q: "ferry harbour" })).results).toEqual([]);
  });

  it("leaves out files that are not ready", async () => {
    expect((await search({ userId: alice, q: "zeppelin" })).results).toEqual([]);
  });

  it("answers no match with an empty list and a count of 0", async () => {
    expect(await search({ userId: alice, q: "xylophonist" })).toEqual({
      results: [],
      count: 0,
      next_offset: null,
      next_cursor: null,
      mode: "quick",
    });
    expect(await search({ userId: carol, q: "refunds" })).toEqual({
      results: [],
      count: 0,
      next_offset: null,
      next_cursor: null,
      mode: "quick",
    });
  });
});

describe("ai mode", () => {
  const question = "How long until refunds are paid?";

  it("with only the local engines: results, a summary citing them, both sources local, no fallbacks", async () => {
    const response = await search({ userId: alice, q: question, mode: "ai" });
    expect(response.mode).toBe("ai");
    expect(response.count).toBe(response.results.length);
    expect(response.results[0]?.file_id).toBe(fileIds.refunds);
    expect(response).toMatchObject({ answered: true, summary_source: "local", vector_source: "local" });
    expect(response.summary).toMatch(/five working days/);
    expect(response.citations!.length).toBeGreaterThan(0);
    for (const c of response.citations!) {
      const cited = response.results[c.result_index];
      expect(cited?.file_id).toBe(c.file_id);
      expect(c.original_name).toBe(cited?.files.original_name);
    }
    expect(response).not.toHaveProperty("fallbacks");
  });

  it("falls back to the local vectors when the remote embedding server cannot be reached, and says so", async () => {
    const localOnly = await search({ userId: alice, q: question, mode: "ai" });
    const response = await search(
      { userId: alice, q: question, mode: "ai" },
      engines({ embedder: unreachableUrl }),
    );
    expect(response.vector_source).toBe("local");
    expect(response.fallbacks).toEqual([
      {
        component: "embedder",
        engine: "text-embedding-3-small",
        used: "local",
        reason: "The embedding server could not be reached.",
      },
    ]);
    expect(response.results.map((r) => r.content)).toEqual(localOnly.results.map((r) => r.content));
    expect(response.summary).toBe(localOnly.summary);
  });

  it("reports a remote embedder's 500 in Locus's words, never the server's", async () => {
    const response = await search(
      { userId: alice, q: question, mode: "ai" },
      engines({ embedder: failingUrl }),
    );
    expect(response.fallbacks).toEqual([
      {
        component: "embedder",
        engine: "text-embedding-3-small",
        used: "local",
        reason: "The embedding server failed (HTTP 500).",
      },
    ]);
    expect(JSON.stringify(response)).not.toContain("Secret42");
    expect(response.results[0]?.file_id).toBe(fileIds.refunds);
  });

  it("falls back to the local summary when the chat model fails, and says so", async () => {
    const localOnly = await search({ userId: alice, q: question, mode: "ai" });
    const response = await search(
      { userId: alice, q: question, mode: "ai" },
      engines({ summarizer: failingUrl }),
    );
    expect(response).toMatchObject({ summary_source: "local", vector_source: "local", answered: true });
    expect(response.summary).toBe(localOnly.summary);
    expect(response.citations).toEqual(localOnly.citations);
    expect(response.fallbacks).toEqual([
      {
        component: "summarizer",
        engine: "gpt-4o-mini",
        used: "local",
        reason: "The chat model server failed (HTTP 500).",
      },
    ]);
    expect(JSON.stringify(response)).not.toContain("Secret42");
  });

  it("reports both fallbacks, the embedder's first, when both remote engines fail", async () => {
    const response = await search(
      { userId: alice, q: question, mode: "ai" },
      engines({ embedder: unreachableUrl, summarizer: unreachableUrl }),
    );
    expect(response.fallbacks?.map((f) => [f.component, f.reason])).toEqual([
      ["embedder", "The embedding server could not be reached."],
      ["summarizer", "The chat model server could not be reached."],
    ]);
    expect(response.results.length).toBeGreaterThan(0);
    expect(response.answered).toBe(true);
  });

  it("never shows another user's passages, not even ones near the question in meaning", async () => {
    const q = "When does the boat to the island depart?";
    // Bob's own search finds his timetable by meaning and words...
    const forBob = await search({ userId: bob, q, mode: "ai" });
    expect(fileIdsOf(forBob)).toContain(fileIds.ferry);
    // ...alice's never does, in results or citations.
    const forAlice = await search({ userId: alice, q, mode: "ai" });
    const aliceFiles = new Set([fileIds.refunds, fileIds.garden]);
    for (const id of fileIdsOf(forAlice)) expect(aliceFiles).toContain(id);
    for (const c of forAlice.citations ?? []) expect(aliceFiles).toContain(c.file_id);
    expect(JSON.stringify(forAlice)).not.toMatch(/ferry|harbour/i);

    const refunds = await search({ userId: alice, q: "refunds shipping costs", mode: "ai" });
    expect(fileIdsOf(refunds)).not.toContain(fileIds.bobRefunds);
    expect(JSON.stringify(refunds)).not.toContain("Bob's shop");
  });

  it("gives the summary on the first page only; later pages carry results", async () => {
    const first = await search({ userId: alice, q: question, mode: "ai", limit: 1 });
    expect(first.summary).toBeDefined();
    expect(first.next_offset).toBe(1);
    // Citations point into this page's results only.
    for (const c of first.citations ?? []) expect(c.result_index).toBeLessThan(first.results.length);
    const second = await search({ userId: alice, q: question, mode: "ai", limit: 1, offset: 1 });
    expect(second.results.length).toBeGreaterThan(0);
    expect(second).not.toHaveProperty("summary");
    expect(second).not.toHaveProperty("citations");
    expect(second.vector_source).toBe(first.vector_source);
    const both = await search({ userId: alice, q: question, mode: "ai", limit: 2 });
    expect([...first.results, ...second.results].map((r) => r.content)).toEqual(
      both.results.map((r) => r.content),
    );
  });

  it("answers a user with no passages with empty results and a summary that says so, without asking the chat model", async () => {
    const requestsBefore = failingServerRequests;
    const response = await search(
      { userId: carol, q: question, mode: "ai" },
      engines({ summarizer: failingUrl }),
    );
    expect(failingServerRequests).toBe(requestsBefore);
    expect(response).toEqual({
      results: [],
      count: 0,
      next_offset: null,
      next_cursor: null,
      mode: "ai",
      summary: NO_ANSWER,
      citations: [],
      answered: false,
      summary_source: "local",
      vector_source: "local",
    });
  });
});
