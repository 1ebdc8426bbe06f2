import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { APIConnectionError } from "openai";
import { alignWords, OpenAiSpeechToText, SpeechEngineError } from "../src/index.ts";

/**
 * The OpenAI engine against a local OpenAI-compatible server (a remote API cannot be reached here):
 * the server checks each request as the real endpoint would need it, and answers as told.
 */
interface Seen {
  path: string;
  auth: string | undefined;
  body: string;
}
let server: Server;
let baseURL: string;
let seen: Seen[] = [];
interface Answer {
  status: number;
  body: unknown;
  delayMs?: number;
}
let answers: ((req: IncomingMessage) => Answer)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        path: req.url ?? "",
        auth: req.headers.authorization,
        body: Buffer.concat(chunks).toString("latin1"),
      });
      const next =
        answers.shift() ?? ((): Answer => ({ status: 500, body: { error: { message: "no answer" } } }));
      const answer = next(req);
      setTimeout(() => {
        if (res.destroyed) return;
        // A short retry hint: the SDK's own back-off would wait half a second and more per retry.
        res.writeHead(answer.status, { "content-type": "application/json", "retry-after-ms": "10" });
        res.end(JSON.stringify(answer.body));
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  // close alone waits for every open connection to end: seconds, with the client's kept alive.
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
  answers = [];
});

const pcm = Buffer.alloc(16_000 * 2 * 4); // four seconds
const engine = (overrides: Partial<ConstructorParameters<typeof OpenAiSpeechToText>[0]> = {}) =>
  new OpenAiSpeechToText({
    baseURL,
    apiKey: "sk-test-key",
    model: "whisper-1",
    timeoutMs: 2000,
    maxRetries: 2,
    ...overrides,
  });

const verbose = {
  task: "transcribe",
  language: "english",
  duration: 4,
  text: "The harbour opens at dawn. Ships wait outside.",
  segments: [
    {
      id: 0,
      seek: 0,
      start: 0.4,
      end: 1.9,
      text: " The harbour opens at dawn.",
      tokens: [],
      temperature: 0,
      avg_logprob: -0.1,
      compression_ratio: 1,
      no_speech_prob: 0,
    },
    {
      id: 1,
      seek: 0,
      start: 2.1,
      end: 3.5,
      text: " Ships wait outside.",
      tokens: [],
      temperature: 0,
      avg_logprob: -0.3,
      compression_ratio: 1,
      no_speech_prob: 0,
    },
  ],
};

describe("alignWords", () => {
  it("matches a server's words to the text's by their letters, across split tokens", () => {
    const words = [
      { word: "don", start: 0, end: 0.2 },
      { word: "'t", start: 0.2, end: 0.3 },
      { word: "stop", start: 0.4, end: 0.8 },
    ];
    expect(alignWords("Don't — stop!", words)).toEqual([
      { word: "Don't", start: 0, end: 0.3 },
      { word: "—", start: 0.3, end: 0.3 },
      { word: "stop!", start: 0.4, end: 0.8 },
    ]);
  });

  it("gives up when the words do not line up with the text", () => {
    expect(alignWords("one two", [{ word: "three", start: 0, end: 1 }])).toBeUndefined();
    expect(alignWords("one", [])).toBeUndefined();
  });
});

describe("OpenAiSpeechToText (local OpenAI-compatible test server; the remote API cannot run here)", () => {
  it("sends the chunk as a WAV to /audio/transcriptions asking for segment times, and reads the segments", async () => {
    answers.push(() => ({ status: 200, body: verbose }));
    const segments = await engine().transcribe(pcm);
    expect(segments).toEqual([
      { text: "The harbour opens at dawn.", start: 0.4, end: 1.9, confidence: 0.9 },
      { text: "Ships wait outside.", start: 2.1, end: 3.5, confidence: 0.74 },
    ]);
    const [request] = seen;
    expect(request?.path).toBe("/v1/audio/transcriptions");
    expect(request?.auth).toBe("Bearer sk-test-key");
    expect(request?.body).toMatch(/name="model"\r\n\r\nwhisper-1\r\n/);
    expect(request?.body).toMatch(/name="response_format"\r\n\r\nverbose_json\r\n/);
    expect(request?.body).toMatch(/name="timestamp_granularities\[\]"\r\n\r\nword\r\n/);
    expect(request?.body).toMatch(/name="timestamp_granularities\[\]"\r\n\r\nsegment\r\n/);
    expect(request?.body).toMatch(
      /filename="chunk.wav"\r\nContent-Type: audio\/wav\r\n\r\nRIFF....WAVEfmt /s,
    );
  });

  it("gives each word of a segment its own times when the server sends word times, punctuation kept", async () => {
    const said = (word: string, start: number, end: number) => ({ word, start, end });
    answers.push(() => ({
      status: 200,
      body: {
        ...verbose,
        words: [
          said("The", 0.4, 0.55),
          said("harbour", 0.6, 1.0),
          said("opens", 1.05, 1.3),
          said("at", 1.35, 1.45),
          said("dawn", 1.5, 1.9),
          said("Ships", 2.1, 2.4),
          said("wait", 2.5, 2.8),
          said("outside", 2.9, 3.5),
        ],
      },
    }));
    const [first, second] = await engine().transcribe(pcm);
    expect(first?.words).toEqual([
      said("The", 0.4, 0.55),
      said("harbour", 0.6, 1.0),
      said("opens", 1.05, 1.3),
      said("at", 1.35, 1.45),
      said("dawn.", 1.5, 1.9),
    ]);
    expect(second?.words?.map((w) => w.word)).toEqual(["Ships", "wait", "outside."]);
  });

  it("retries a 429 and a 503, then succeeds", async () => {
    answers.push(
      () => ({ status: 429, body: { error: { message: "slow down" } } }),
      () => ({ status: 503, body: { error: { message: "busy" } } }),
      () => ({ status: 200, body: verbose }),
    );
    expect(await engine().transcribe(pcm)).toHaveLength(2);
    expect(seen).toHaveLength(3);
  });

  it("gives up on a server that does not answer in time", async () => {
    answers.push(() => ({ status: 200, body: verbose, delayMs: 3000 }));
    const err = await engine({ timeoutMs: 300, maxRetries: 0 })
      .transcribe(pcm)
      .catch((e: unknown) => e);
    // It gave up before the server's answer at 3 s (which would have been a transcript, not this
    // error), once: an order of events, not a time a busy CI could exceed.
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(seen).toHaveLength(1);
  });

  it("says what to fix when the server refuses the key or the model", async () => {
    answers.push(() => ({ status: 401, body: { error: { message: "bad key" } } }));
    const err = (await engine()
      .transcribe(pcm)
      .catch((e: unknown) => e)) as SpeechEngineError;
    expect(err).toBeInstanceOf(SpeechEngineError);
    expect(err.message).toMatch(/refused the request \(401\): check OPENAI_BASE_URL, OPENAI_API_KEY/);
    expect(err.message).not.toMatch(/sk-test-key/);
  });

  it("takes a server's plain text when it gives no segments", async () => {
    answers.push(() => ({ status: 200, body: { text: "Just words." } }));
    expect(await engine().transcribe(pcm)).toEqual([{ text: "Just words.", start: 0, end: 4 }]);
  });
});
