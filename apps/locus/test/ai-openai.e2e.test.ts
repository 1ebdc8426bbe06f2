import {
  client,
  createUserWithKey,
  makePdf,
  removeDataDir,
  startFakeOpenAi,
  startLocus,
  uploadAndWait,
  type Client,
  type FakeOpenAi,
  type LocusProcess,
} from "@locus/testing";
import { schemaErrors } from "./openapi-validator.ts";

/**
 * ai mode with the OpenAI engines (LOCUS_EMBEDDER=openai, LOCUS_SUMMARIZER=openai) against a local
 * OpenAI-compatible server that checks each request (a remote API cannot be reached here; the fake
 * stands in for OpenAI, Ollama or vLLM). Then that server fails, hangs and answers badly, and
 * Locus falls back to its local engines and says so.
 */
let fake: FakeOpenAi;
let locus: LocusProcess;
let c: Client;

const PAGES = [
  ["The heron nests in tall reeds beside the lake.", "Herons eat fish, frogs and insects."],
  ["Kingfishers dive from branches to catch small fish.", "Their nests are tunnels dug into river banks."],
];

interface AiBody {
  results: { content: string; file_id: string; locator: { page?: number } }[];
  count: number;
  summary: string;
  citations: {
    n: number;
    file_id: string;
    quote: string;
    result_index: number;
    locator: { page?: number };
  }[];
  answered: boolean;
  summary_source: string;
  vector_source: string;
  fallbacks?: { component: string; engine: string; used: string; reason: string }[];
}

const ask = async (q: string): Promise<AiBody> => {
  const res = await c.get(`/api/search?q=${encodeURIComponent(q)}&mode=ai&limit=5`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as AiBody;
  expect(schemaErrors("SearchResponse", body)).toBeNull();
  return body;
};

beforeAll(async () => {
  fake = await startFakeOpenAi();
  locus = await startLocus({
    env: {
      LOCUS_EMBEDDER: "openai",
      LOCUS_SUMMARIZER: "openai",
      OPENAI_BASE_URL: fake.baseUrl,
      OPENAI_API_KEY: fake.apiKey,
      LOCUS_OPENAI_EMBED_MODEL: "fake-embed",
      LOCUS_OPENAI_CHAT_MODEL: "fake-chat",
      // Short, so the failure cases end quickly: search waits 1 s a call, one retry.
      LOCUS_AI_TIMEOUT_MS: "1000",
      LOCUS_AI_MAX_RETRIES: "1",
      LOCUS_OPENAI_TIMEOUT_MS: "2000",
      LOCUS_OPENAI_MAX_RETRIES: "1",
      LOCUS_MAX_ATTEMPTS: "2",
      LOCUS_RATE_LIMIT_PRO: "1000",
    },
  });
  const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
  c = client(locus.baseUrl, key);
  const birds = await uploadAndWait(c, await makePdf({ pages: PAGES }), "birds.pdf", 60_000);
  expect(birds.status).toBe("ready");
}, 180_000);

afterAll(async () => {
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
  await fake.close();
});

beforeEach(() => {
  fake.behaviour = "ok";
  fake.seen.length = 0;
});

describe("with the server answering", () => {
  it("indexes passages with remote vectors: a new file's passages are sent to /embeddings", async () => {
    const second = await uploadAndWait(
      c,
      await makePdf({ pages: [["Ospreys plunge feet first into the water for fish."]] }),
      "osprey.pdf",
      60_000,
    );
    expect(second.status).toBe("ready");
    const embeds = fake.seen.filter((r) => r.path === "/v1/embeddings");
    expect(embeds.length).toBeGreaterThan(0);
    for (const r of embeds) {
      expect(r.authorization).toBe(`Bearer ${fake.apiKey}`);
      expect(r.body).toMatchObject({ model: "fake-embed", encoding_format: "float" });
    }
    const inputs = embeds.flatMap((r) => r.body.input as string[]);
    expect(inputs.some((t) => t.includes("Ospreys plunge feet first"))).toBe(true);
  });

  it("answers with the remote vectors and the chat model's summary, its markers checked and renumbered", async () => {
    const body = await ask("Where do herons nest?");
    expect(body).toMatchObject({ vector_source: "fake-embed", summary_source: "fake-chat", answered: true });
    expect(body.fallbacks).toBeUndefined();
    expect(body.results[0]?.content).toMatch(/heron/i);

    // The question went to /embeddings; the passages, numbered, and the question to the chat model.
    const question = fake.seen.find((r) => r.path === "/v1/embeddings");
    expect(question?.body.input).toEqual(["Where do herons nest?"]);
    const chat = fake.seen.find((r) => r.path === "/v1/chat/completions");
    expect(chat?.authorization).toBe(`Bearer ${fake.apiKey}`);
    const messages = chat?.body.messages as { role: string; content: string }[];
    expect(chat?.body.model).toBe("fake-chat");
    expect(messages[0]?.role).toBe("system");
    expect(messages[1]?.content).toContain("Question: Where do herons nest?");
    expect(messages[1]?.content).toMatch(/^\[1\] \(from "birds\.pdf"\)$/m);

    // The fake cites [1, 99] then [2]: 99 was never given, so it is gone; the rest are [1] and [2].
    expect(body.summary).not.toContain("99");
    expect(body.summary).toMatch(/\[1\]\..*\[2\]\./);
    expect(body.citations.map((c) => [c.n, c.result_index])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    for (const citation of body.citations) {
      expect(citation.quote).toBe(body.results[citation.result_index]?.content);
      expect(citation.locator.page).toBe(body.results[citation.result_index]?.locator.page);
    }
  });

  it("passes on a model's 'not answered' as answered: false, citing nothing", async () => {
    fake.behaviour = "not-answered";
    const body = await ask("Where do herons nest?");
    expect(body).toMatchObject({ answered: false, citations: [], summary_source: "fake-chat" });
    expect(body.summary).toMatch(/do not seem to answer/);
  });
});

describe("when the server misbehaves", () => {
  it("a server that fails (500, after a retry) gives the local vectors and summary, and says so", async () => {
    fake.behaviour = "fail";
    const body = await ask("Where do herons nest?");
    expect(body).toMatchObject({ vector_source: "local", summary_source: "local", answered: true });
    expect(body.results[0]?.content).toMatch(/heron/i);
    expect(body.fallbacks?.map((f) => [f.component, f.engine, f.used])).toEqual([
      ["embedder", "fake-embed", "local"],
      ["summarizer", "fake-chat", "local"],
    ]);
    // Locus's own words: what the server said (a host, an account) stays in the log.
    expect(body.fallbacks?.[0]?.reason).toBe("The embedding server failed (HTTP 500).");
    expect(body.fallbacks?.[1]?.reason).toBe("The chat model server failed (HTTP 500).");
    expect(JSON.stringify(body)).not.toMatch(/gpu-node-7|org-Secret42|had an error/);
    // One retry each (LOCUS_AI_MAX_RETRIES=1): two requests to each endpoint, no more.
    expect(fake.seen.filter((r) => r.path === "/v1/embeddings")).toHaveLength(2);
    expect(fake.seen.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(2);
    expect(JSON.stringify(body)).not.toContain(fake.apiKey);
  });

  it("a server that never answers is given up after the timeout, and the local engines answer", async () => {
    fake.behaviour = "hang";
    const started = Date.now();
    const body = await ask("Where do herons nest?");
    expect(body).toMatchObject({ vector_source: "local", summary_source: "local" });
    expect(body.fallbacks?.map((f) => f.component)).toEqual(["embedder", "summarizer"]);
    expect(body.fallbacks?.[0]?.reason).toMatch(/time/i);
    // Two calls of two attempts of 1 s, plus the client's back-off: well under the 30 s jest allows.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it("an answer that cites nothing is not shown: the local summary answers instead", async () => {
    fake.behaviour = "no-citations";
    const body = await ask("Where do herons nest?");
    expect(body).toMatchObject({ vector_source: "fake-embed", summary_source: "local", answered: true });
    expect(body.fallbacks).toEqual([
      expect.objectContaining({ component: "summarizer", engine: "fake-chat", used: "local" }),
    ]);
    expect(body.fallbacks?.[0]?.reason).toMatch(/cited none/);
    expect(body.citations.length).toBeGreaterThan(0);
  });

  it("a file indexed while the server is down is still ready, found by keywords and local vectors", async () => {
    fake.behaviour = "fail";
    const late = await uploadAndWait(
      c,
      await makePdf({ pages: [["Puffins carry many small fish crosswise in their beaks."]] }),
      "puffin.pdf",
      90_000,
    );
    expect(late.status).toBe("ready");
    const quick = (await (await c.get("/api/search?q=puffins")).json()) as AiBody;
    expect(quick.results.map((r) => r.file_id)).toContain(late.id);
    // The server is still down: ai mode falls back to local vectors, which the file has.
    const body = await ask("puffins beaks");
    expect(body.vector_source).toBe("local");
    expect(body.results.map((r) => r.file_id)).toContain(late.id);
  }, 120_000);

  it("never writes the API key to the logs", () => {
    expect(locus.logs.join("\n")).not.toContain(fake.apiKey);
  });
});
