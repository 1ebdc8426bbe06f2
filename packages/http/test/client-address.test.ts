import type { AddressInfo } from "node:net";
import { Router } from "express";
import { createLogger } from "@locus/runtime";
import { clientAddress, createProcessApp } from "../src/index.ts";

/** A real HTTP server around the process app, answering with the address limits would count. */
async function withApp(
  trustProxy: false | number | string[],
  run: (
    ask: (headers?: Record<string, string>) => Promise<{ address: string; secure: boolean }>,
  ) => Promise<void>,
): Promise<void> {
  const router = Router();
  router.get("/who", (req, res) => {
    res.json({ address: clientAddress(req), secure: req.secure });
  });
  const app = createProcessApp({
    logger: createLogger("test", "silent"),
    readiness: () => Promise.resolve({ bus: "ok" }),
    routers: [router],
    trustProxy,
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    await run(async (headers = {}) => {
      const res = await fetch(`http://127.0.0.1:${port}/who`, { headers });
      return (await res.json()) as { address: string; secure: boolean };
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("clientAddress and LOCUS_TRUST_PROXY", () => {
  it("believes no X-Forwarded-For by default: a client cannot claim another address", async () => {
    await withApp(false, async (ask) => {
      expect(await ask()).toEqual({ address: "127.0.0.1", secure: false });
      expect(await ask({ "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https" })).toEqual({
        address: "127.0.0.1",
        secure: false,
      });
    });
  });

  it("behind a trusted proxy, takes the client's address and scheme from it", async () => {
    await withApp(["loopback"], async (ask) => {
      expect(await ask({ "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https" })).toEqual({
        address: "203.0.113.9",
        secure: true,
      });
      // Only the hops it trusts: an address the client wrote before the proxy's own is ignored.
      expect((await ask({ "X-Forwarded-For": "198.51.100.1, 203.0.113.9" })).address).toBe("203.0.113.9");
    });
    await withApp(1, async (ask) => {
      expect((await ask({ "X-Forwarded-For": "198.51.100.1, 203.0.113.9" })).address).toBe("203.0.113.9");
    });
  });

  it("counts IPv6 clients by their /64, and IPv4 written as IPv6 as IPv4", async () => {
    await withApp(["127.0.0.1/8"], async (ask) => {
      const a = await ask({ "X-Forwarded-For": "2001:db8:1:2::a" });
      const b = await ask({ "X-Forwarded-For": "2001:db8:1:2:ffff:1:2:3" });
      const other = await ask({ "X-Forwarded-For": "2001:db8:1:3::a" });
      expect(a.address).toBe("2001:db8:1:2::/64");
      expect(b.address).toBe(a.address);
      expect(other.address).toBe("2001:db8:1:3::/64");
      expect((await ask({ "X-Forwarded-For": "::ffff:192.0.2.7" })).address).toBe("192.0.2.7");
    });
  });
});
