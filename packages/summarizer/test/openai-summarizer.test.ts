import { startFakeOpenAi, type FakeOpenAi } from "@locus/testing";
import { citedSummary, OpenAiSummarizer, SummarizerError, type CitablePassage } from "../src/index.ts";

const passages: CitablePassage[] = [
  { n: 1, fileName: "birds.pdf", content: "The heron nests in tall reeds\nbeside the lake." },
  { n: 2, fileName: "fish.pdf", content: "Herons eat fish and frogs." },
  { n: 3, fileName: "boats.pdf", content: "Boats are moored at the jetty." },
];

describe("citedSummary: what the model writes is checked before anyone sees it", () => {
  it("renumbers markers in order of first appearance and quotes the passages they name", () => {
    const summary = citedSummary(
      "Herons eat fish [2]. They nest in reeds [1]. Again fish [2].",
      passages,
      "m",
    );
    expect(summary.text).toBe("Herons eat fish [1]. They nest in reeds [2]. Again fish [1].");
    expect(summary.citations).toEqual([
      { n: 1, passage: 2, quote: "Herons eat fish and frogs." },
      { n: 2, passage: 1, quote: passages[0]!.content },
    ]);
    expect(summary).toMatchObject({ answered: true, source: "m" });
  });

  it("splits grouped markers and drops numbers it was not given", () => {
    const summary = citedSummary(
      "Herons nest in reeds [1, 7]. Unsupported claim [9]. Fish [2; 3].",
      passages,
      "m",
    );
    expect(summary.text).toBe("Herons nest in reeds [1]. Unsupported claim. Fish [2][3].");
    expect(summary.citations.map((c) => c.passage)).toEqual([1, 2, 3]);
  });

  it("refuses an answer that cites none of the passages", () => {
    expect(() => citedSummary("Herons are birds.", passages, "m")).toThrow(SummarizerError);
    expect(() => citedSummary("Herons are birds [12].", passages, "m")).toThrow(/cited none/);
  });
});

describe("OpenAiSummarizer against a local OpenAI-compatible server", () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.behaviour = "ok";
    fake.seen.length = 0;
  });
  const engine = (timeoutMs = 2_000) =>
    new OpenAiSummarizer({
      baseURL: fake.baseUrl,
      apiKey: fake.apiKey,
      model: "llama3.1",
      timeoutMs,
      maxRetries: 1,
    });

  it("sends the instructions, the numbered passages with their files and the question", async () => {
    const summary = await engine().summarize("Where do herons nest?", passages);
    const request = fake.seen[0]!;
    expect(request).toMatchObject({ path: "/v1/chat/completions", authorization: `Bearer ${fake.apiKey}` });
    expect(request.body).toMatchObject({ model: "llama3.1", temperature: 0.1, max_tokens: 400 });
    const [system, user] = request.body.messages as { role: string; content: string }[];
    expect(system?.role).toBe("system");
    expect(system?.content).toMatch(/only the numbered passages/);
    expect(user?.content).toBe(
      'Passages:\n\n[1] (from "birds.pdf")\nThe heron nests in tall reeds beside the lake.\n\n' +
        '[2] (from "fish.pdf")\nHerons eat fish and frogs.\n\n[3] (from "boats.pdf")\nBoats are moored at the jetty.' +
        "\n\nQuestion: Where do herons nest?",
    );
    // The fake cites [1, 99] and [2]: 99 is dropped.
    expect(summary.citations.map((c) => c.passage)).toEqual([1, 2]);
    expect(summary.text).not.toContain("99");
    expect(summary.source).toBe("llama3.1");
  });

  it("passes on NOT_ANSWERED as a summary that cites nothing", async () => {
    fake.behaviour = "not-answered";
    expect(await engine().summarize("Where do herons nest?", passages)).toMatchObject({
      answered: false,
      citations: [],
      source: "llama3.1",
    });
  });

  it("asks nothing when there are no passages", async () => {
    expect((await engine().summarize("Where do herons nest?", [])).answered).toBe(false);
    expect(fake.seen).toHaveLength(0);
  });

  it("a failing or silent server is a SummarizerError the caller can fall back from", async () => {
    fake.behaviour = "fail";
    await expect(engine().summarize("q", passages)).rejects.toThrow(SummarizerError);
    expect(fake.seen).toHaveLength(2);
    fake.behaviour = "hang";
    await expect(engine(300).summarize("q", passages)).rejects.toThrow(/chat model server failed/);
  });
});
