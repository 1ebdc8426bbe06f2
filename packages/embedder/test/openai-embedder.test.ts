import { startFakeOpenAi, type FakeOpenAi } from "@locus/testing";
import { dot, EmbedderError, isZero, OpenAiEmbedder, type OpenAiEmbedderOptions } from "../src/index.ts";

/** The OpenAI engine against a local OpenAI-compatible server that checks each request. */
let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi({ dimensions: 32 });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.behaviour = "ok";
  fake.refuseNext = { count: 0, status: 429 };
  fake.seen.length = 0;
});

const engine = (overrides: Partial<OpenAiEmbedderOptions> = {}) =>
  new OpenAiEmbedder({
    baseURL: fake.baseUrl,
    apiKey: fake.apiKey,
    model: "nomic-embed-text",
    timeoutMs: 2_000,
    maxRetries: 1,
    ...overrides,
  });

it("asks /embeddings with the key, the model and float encoding, and returns unit vectors in order", async () => {
  const e = engine();
  expect(e.dimensions).toBeUndefined();
  const [a, b, again] = await e.embed(["heron nests in reeds", "kingfisher dives", "heron nests in reeds"]);
  expect(fake.seen).toHaveLength(1);
  expect(fake.seen[0]).toMatchObject({
    path: "/v1/embeddings",
    authorization: `Bearer ${fake.apiKey}`,
    body: {
      model: "nomic-embed-text",
      input: ["heron nests in reeds", "kingfisher dives", "heron nests in reeds"],
      encoding_format: "float",
    },
  });
  expect(fake.seen[0]?.body).not.toHaveProperty("dimensions");
  expect(a).toHaveLength(32);
  expect(dot(a!, a!)).toBeCloseTo(1, 5);
  expect(dot(a!, again!)).toBeCloseTo(1, 5);
  expect(dot(a!, b!)).toBeLessThan(0.99);
  expect(e.dimensions).toBe(32);
  expect(e.space).toBe("openai:nomic-embed-text");
});

it("asks for shorter vectors when told, and names them in its space", async () => {
  const e = engine({ model: "text-embedding-3-small", dimensions: 16 });
  const [v] = await e.embed(["heron"]);
  expect(fake.seen[0]?.body).toMatchObject({ dimensions: 16 });
  expect(v).toHaveLength(16);
  expect(e.space).toBe("openai:text-embedding-3-small:16");
});

it("sends batches of at most batchSize texts, and never a text without words", async () => {
  const e = engine({ batchSize: 2 });
  const vectors = await e.embed(["one heron", "", "two herons", "   ", "three herons", "!!!"]);
  expect(fake.seen.map((r) => r.body.input)).toEqual([["one heron", "two herons"], ["three herons"]]);
  expect(vectors.map(isZero)).toEqual([false, true, false, true, false, true]);
  expect(vectors.every((v) => v.length === 32)).toBe(true);
});

it("a 429 or 503 is retried after the server's wait, and the retry's answer is used", async () => {
  fake.refuseNext = { count: 1, status: 429 };
  const [v] = await engine().embed(["heron"]);
  expect(v).toHaveLength(32);
  fake.refuseNext = { count: 1, status: 503 };
  const [w] = await engine().embed(["heron"]);
  expect(Array.from(w!)).toEqual(Array.from(v!));
  expect(fake.seen).toHaveLength(4);
});

it("a failing server ends in an EmbedderError after its retries", async () => {
  fake.behaviour = "fail";
  const error = await engine()
    .embed(["heron"])
    .catch((err: unknown) => err);
  expect(error).toBeInstanceOf(EmbedderError);
  expect((error as Error).message).toMatch(/500/);
  expect(fake.seen).toHaveLength(2);
});

it("a server that never answers ends in an EmbedderError at the timeout", async () => {
  fake.behaviour = "hang";
  const started = Date.now();
  await expect(engine({ timeoutMs: 300, maxRetries: 0 }).embed(["heron"])).rejects.toThrow(EmbedderError);
  // Its 300 ms timeout, with room for a busy CI: without one, the wait would last until the
  // test's own time-out.
  expect(Date.now() - started).toBeLessThan(300 + 10_000);
});

it("a refused key is an EmbedderError naming the status", async () => {
  await expect(engine({ apiKey: "sk-wrong" }).embed(["heron"])).rejects.toThrow(/401/);
});

it("refuses vectors whose length changes (another model behind the same name)", async () => {
  // An engine that has seen 8-number vectors, then gets 32 (the fake's own size).
  const drifting = engine();
  (drifting as unknown as { size: number }).size = 8;
  await expect(drifting.embed(["kingfisher"])).rejects.toThrow(/vector of 32 numbers; this model's have 8/);
});
