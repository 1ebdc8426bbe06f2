import { createLogger } from "@locus/runtime";
import { startHttpServer, type HttpServer } from "../src/http-server.ts";

/**
 * The request-line limit: Node's 16 KiB where clients connect, more where only the gateway calls
 * (it passes on a client's filters in a longer encoding). Over the limit: a JSON 431 naming it.
 */
const logger = createLogger("test", "silent");
const servers: HttpServer[] = [];
const start = async (maxHeaderBytes?: number) => {
  const server = await startHttpServer((_req, res) => res.end("ok"), {
    host: "127.0.0.1",
    port: 0,
    logger,
    ...(maxHeaderBytes ? { maxHeaderBytes } : {}),
  });
  servers.push(server);
  return server;
};

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

const longPath = (bytes: number) => `/x?q=${"a".repeat(bytes)}`;

it("refuses a request line over 16 KiB by default with a JSON 431 that names the limit", async () => {
  const server = await start();
  expect((await fetch(`${server.url}${longPath(15_000)}`)).status).toBe(200);
  const refused = await fetch(`${server.url}${longPath(20_000)}`);
  expect(refused.status).toBe(431);
  expect(await refused.json()).toEqual({ detail: expect.stringContaining("under 16 KB") });
});

it("takes longer request lines where a larger limit is given", async () => {
  const server = await start(64 * 1024);
  expect((await fetch(`${server.url}${longPath(40_000)}`)).status).toBe(200);
  const refused = await fetch(`${server.url}${longPath(70_000)}`);
  expect(refused.status).toBe(431);
  expect(await refused.json()).toEqual({ detail: expect.stringContaining("under 64 KB") });
});
