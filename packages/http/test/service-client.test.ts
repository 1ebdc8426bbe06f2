import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { LocusError } from "@locus/contracts";
import { z } from "zod";
import { ServiceClient, ServiceIdentity } from "../src/index.ts";

const SECRET = "Yq3v9XwK2pL7sD0fG5hJ8kZ1cV4bN6mQ-_aRtEuIoP";

/** A real HTTP server whose routes answer as a Locus service would, or not at all. */
async function withServer(run: (base: string) => Promise<void>): Promise<void> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/ok") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ fine: true }));
    } else if (req.url === "/refused") {
      res.statusCode = 429;
      res.setHeader("x-locus-error-code", "rate_limited");
      res.setHeader("retry-after", "7");
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ detail: "Slow down." }));
    } else if (req.url?.startsWith("/other-version")) {
      // A callee of another version: the status is a word this caller does not know.
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ files: [{ id: "f1", status: "archived" }], next_cursor: null }));
    } else if (req.url === "/stalls-body") {
      res.setHeader("content-type", "application/json");
      res.write('{"partial": ');
    }
    // /silent: never answers.
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** What /ok answers. */
const Fine = z.object({ fine: z.literal(true) });

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("ServiceClient: calls between services", () => {
  const identity = new ServiceIdentity(SECRET);

  it("answers with the callee's JSON and leaves no timer behind", async () => {
    await withServer(async (base) => {
      const client = new ServiceClient(base, "search", identity, 60_000);
      const before = timers();
      for (let i = 0; i < 5; i++) expect(await client.json(`user-${i}`, "/ok", Fine)).toEqual({ fine: true });
      // Each call's time limit ends with the call: none waits the minute out.
      expect(timers()).toBeLessThanOrEqual(before);
    });
  });

  it("throws the callee's refusal as its LocusError, with its Retry-After", async () => {
    await withServer(async (base) => {
      const client = new ServiceClient(base, "search", identity);
      const refusal = await client.json("user", "/refused", Fine).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(LocusError);
      expect(refusal).toMatchObject({ code: "rate_limited", message: "Slow down." });
      expect((refusal as LocusError).headers).toEqual({ "retry-after": "7" });
    });
  });

  it("gives up on a callee that does not answer, or stops halfway, within the time limit: 503", async () => {
    await withServer(async (base) => {
      const client = new ServiceClient(base, "search", identity, 300);
      for (const path of ["/silent", "/stalls-body"]) {
        const started = Date.now();
        const err = await client.json("user", path, Fine).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LocusError);
        expect((err as LocusError).code).toBe("unavailable");
        // Its 300 ms limit, with room for a busy CI: a callee that never answers would hold it
        // until the test's own time-out.
        expect(Date.now() - started).toBeLessThan(300 + 10_000);
      }
    });
  });

  it("fails loudly on an answer of another shape, naming the endpoint and the first field that differs", async () => {
    await withServer(async (base) => {
      const client = new ServiceClient(base, "files", identity);
      const Page = z.object({
        files: z.array(z.object({ id: z.string(), status: z.enum(["pending", "ready"]) })),
        next_cursor: z.string().nullable(),
      });
      const err = await client.json("user", "/other-version?q=secret+words", Page).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LocusError);
      expect((err as LocusError).code).toBe("internal");
      const { message } = err as LocusError;
      expect(message).toMatch(/^The files service's answer to GET \/other-version does not match/);
      expect(message).toContain("at files[0].status: Invalid option");
      // What the user asked is not repeated in an error that may be logged or shown.
      expect(message).not.toContain("secret");
    });
  });

  it("says a callee that cannot be reached is unavailable", async () => {
    const client = new ServiceClient("http://127.0.0.1:1", "files", identity, 2_000);
    const err = await client.request("user", "/internal/files/x").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "unavailable" });
  });
});
