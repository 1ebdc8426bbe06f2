import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { LocusError } from "@locus/contracts";
import { ElasticsearchSearchIndex } from "../src/elasticsearch-search-index.ts";
import { axisVector, failureOf } from "./elasticsearch-mock-cluster.ts";

// ---------------------------------------------------------------------------------------------
// The connection settings through the client's real HTTP connection, against local servers that
// are not Elasticsearch: what reaches the wire, and a server that never answers.
// ---------------------------------------------------------------------------------------------

describe("ElasticsearchSearchIndex connection settings against a local HTTP server (no Elasticsearch)", () => {
  /** Answers every request as a cluster whose alias exists, recording the headers. */
  async function fakeNode(): Promise<{
    url: string;
    headers: IncomingHttpHeaders[];
    close(): Promise<void>;
  }> {
    const headers: IncomingHttpHeaders[] = [];
    const server = createHttpServer((req, res) => {
      headers.push(req.headers);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "x-elastic-product": "Elasticsearch" });
        res.end(req.method === "HEAD" ? undefined : JSON.stringify({ hits: { hits: [] } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      headers,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }

  it("sends the API key, or basic auth, on every request", async () => {
    const node = await fakeNode();
    try {
      const withKey = new ElasticsearchSearchIndex({ node: node.url, apiKey: "a2V5LWlkOnNlY3JldA==" });
      await withKey.search({ userId: "u", text: "revenue", limit: 1 });
      await withKey.close();
      const withPassword = new ElasticsearchSearchIndex({
        node: node.url,
        username: "locus",
        password: "s3cret",
      });
      await withPassword.check();
      await withPassword.close();
      expect(node.headers.map((h) => h.authorization)).toEqual([
        "ApiKey a2V5LWlkOnNlY3JldA==",
        "ApiKey a2V5LWlkOnNlY3JldA==",
        `Basic ${Buffer.from("locus:s3cret").toString("base64")}`,
      ]);
    } finally {
      await node.close();
    }
  });

  it("fails with unavailable after requestTimeoutMs when the server accepts but never answers", async () => {
    const sockets = new Set<Socket>();
    const silent = createTcpServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    // The client's default connection (undici) keeps time in steps of about a second, so a
    // timeout below one second is not honoured to the millisecond.
    const index = new ElasticsearchSearchIndex({ node: `http://127.0.0.1:${port}`, requestTimeoutMs: 1_000 });
    try {
      const started = Date.now();
      const err = await failureOf(index.search({ userId: "u", text: "revenue", limit: 5 }));
      const elapsed = Date.now() - started;
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ code: "unavailable", status: 503 });
      expect(elapsed).toBeGreaterThanOrEqual(950);
      // One timeout, not one per retry: timed-out requests are not retried. Counted by the
      // connections the server saw (a retry opens another), not timed, so a busy CI cannot flake it.
      expect(sockets.size).toBe(1);
    } finally {
      await index.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("search and vectorSearch fail with unavailable when nothing listens", async () => {
    const index = new ElasticsearchSearchIndex({ node: "http://127.0.0.1:1", maxRetries: 0 });
    try {
      const vectorErr = await failureOf(
        index.vectorSearch({
          userId: "u",
          slot: "local",
          space: "local:test",
          vector: axisVector(100),
          limit: 5,
        }),
      );
      expect(vectorErr).toBeInstanceOf(LocusError);
      expect(vectorErr).toMatchObject({ code: "unavailable", status: 503 });
      const searchErr = await failureOf(index.search({ userId: "u", text: "revenue", limit: 5 }));
      expect(searchErr).toBeInstanceOf(LocusError);
      expect(searchErr).toMatchObject({ code: "unavailable", status: 503 });
    } finally {
      await index.close();
    }
  });

  it("check() fails with unavailable at once when nothing listens (a readiness probe does not wait)", async () => {
    const index = new ElasticsearchSearchIndex({ node: "http://127.0.0.1:1" });
    try {
      const started = Date.now();
      await expect(index.check()).rejects.toMatchObject({ code: "unavailable" });
      // A refused connection answers at once: a bound generous for a busy CI, and half the 10 s
      // request timeout it must not wait out.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await index.close();
    }
  });
});
