import { createHash } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A local OpenAI-compatible server for tests (a remote API cannot be reached here). It answers
 * `/v1/embeddings` and `/v1/chat/completions` the way the real endpoints do, checks every request
 * as they would (key, model, input), records what it saw, and can be told to misbehave.
 *
 * - Embeddings are a hashed bag of words (each word adds 1 to one of `dimensions` components):
 *   texts that share words are near each other, which is all a test of the plumbing needs.
 * - A chat completion cites the first two passages it was given, plus a passage [99] it was not
 *   given (a hallucinated marker the caller must drop), quoting a few words of each.
 */
export type FakeBehaviour =
  | "ok"
  /** 500 with an error body, every time (the client retries, then gives up). */
  | "fail"
  /** Accepts the request and never answers (the client's timeout must end it). */
  | "hang"
  /** The chat model says the passages do not answer. */
  | "not-answered"
  /** The chat model answers without citing anything. */
  | "no-citations";

export interface SeenRequest {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface FakeOpenAi {
  /** Base URL to give as OPENAI_BASE_URL (ends in /v1). */
  baseUrl: string;
  apiKey: string;
  seen: SeenRequest[];
  behaviour: FakeBehaviour;
  /** The next `count` requests get `status` (429 "slow down", 503…) before `behaviour` applies again. */
  refuseNext: { count: number; status: number };
  close(): Promise<void>;
}

export async function startFakeOpenAi(
  options: { apiKey?: string; dimensions?: number } = {},
): Promise<FakeOpenAi> {
  const apiKey = options.apiKey ?? "sk-fake-openai-test-key";
  const dimensions = options.dimensions ?? 48;
  const sockets = new Set<Socket>();
  const fake: FakeOpenAi = {
    baseUrl: "",
    apiKey,
    seen: [],
    behaviour: "ok",
    refuseNext: { count: 0, status: 429 },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, message: string) =>
    reply(res, status, { error: { message, type: "invalid_request_error", code: null } });

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
      } catch {
        return error(res, 400, "We could not parse the JSON body of your request.");
      }
      fake.seen.push({ path: req.url ?? "", authorization: req.headers.authorization, body });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return error(res, 401, "Incorrect API key provided.");
      if (fake.refuseNext.count > 0) {
        fake.refuseNext.count -= 1;
        res.setHeader("retry-after-ms", "10");
        return reply(res, fake.refuseNext.status, { error: { message: "Rate limit reached; slow down." } });
      }
      if (fake.behaviour === "hang") return;
      if (fake.behaviour === "fail") {
        // The SDK's own back-off before a retry is half a second and more: the hint shortens it.
        res.setHeader("retry-after-ms", "10");
        // With what upstream errors carry: a host and an account, which must never reach a client.
        return reply(res, 500, {
          error: { message: "The server had an error on gpu-node-7.internal.example for org-Secret42." },
        });
      }
      if (typeof body.model !== "string" || body.model.length === 0)
        return error(res, 400, "model is required");

      if (req.method === "POST" && req.url === "/v1/embeddings") {
        const input = typeof body.input === "string" ? [body.input] : body.input;
        if (
          !Array.isArray(input) ||
          input.length === 0 ||
          input.some((t) => typeof t !== "string" || t === "")
        ) {
          return error(res, 400, "input must be a non-empty string or array of non-empty strings");
        }
        const size = typeof body.dimensions === "number" ? body.dimensions : dimensions;
        return reply(res, 200, {
          object: "list",
          model: body.model,
          data: (input as string[]).map((text, index) => ({
            object: "embedding",
            index,
            embedding: hashedVector(text, size),
          })),
          usage: { prompt_tokens: 1, total_tokens: 1 },
        });
      }

      if (req.method === "POST" && req.url === "/v1/chat/completions") {
        const messages = body.messages as { role: string; content: string }[] | undefined;
        const user = messages?.find((m) => m.role === "user")?.content;
        if (!Array.isArray(messages) || typeof user !== "string")
          return error(res, 400, "messages are required");
        const passages = [...user.matchAll(/^\[(\d+)\][^\n]*\n(.*)$/gm)].map((m) => ({
          n: Number(m[1]),
          text: m[2] ?? "",
        }));
        let content: string;
        if (fake.behaviour === "not-answered") content = "NOT_ANSWERED";
        else if (fake.behaviour === "no-citations") content = "The documents say many things.";
        else {
          const [first, second] = passages;
          const gist = (p: { text: string } | undefined) => p?.text.split(/\s+/).slice(0, 6).join(" ") ?? "";
          content =
            `The first document says "${gist(first)}" [${first?.n ?? 1}, 99].` +
            (second ? ` Another adds "${gist(second)}" [${second.n}].` : "");
        }
        return reply(res, 200, {
          id: "chatcmpl-fake",
          object: "chat.completion",
          created: 0,
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      }
      return error(res, 404, `Unknown request URL: ${req.method ?? ""} ${req.url ?? ""}`);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

/** A deterministic bag-of-words vector: each lower-cased word adds 1 to one component. */
function hashedVector(text: string, size: number): number[] {
  const vector = new Array<number>(size).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const slot = createHash("sha1").update(word).digest().readUInt32LE(0) % size;
    vector[slot] = (vector[slot] ?? 0) + 1;
  }
  // Not unit length on purpose: the client must scale it.
  return vector;
}
