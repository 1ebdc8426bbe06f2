import type { AddressInfo } from "node:net";
import { Router } from "express";
import { SignJWT } from "jose";
import { z } from "zod";
import { createLogger } from "@locus/runtime";
import { callerOf, createProcessApp, ServiceClient, ServiceIdentity } from "../src/index.ts";

const SECRET = "Yq3v9XwK2pL7sD0fG5hJ8kZ1cV4bN6mQ-_aRtEuIoP";

/** A files-like service over real HTTP: one route answering with the caller the token names. */
async function withService(run: (base: string) => Promise<void>): Promise<void> {
  const identity = new ServiceIdentity(SECRET);
  const router = Router();
  router.all("/internal/files{/:id}", identity.require("files"), (req, res) => {
    res.json({ user: callerOf(res), method: req.method, url: req.originalUrl });
  });
  const app = createProcessApp({
    logger: createLogger("test", "silent"),
    readiness: () => Promise.resolve({}),
    routers: [router],
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const call = (url: string, token?: string, method = "GET") =>
  fetch(url, { method, headers: token ? { Authorization: `Bearer ${token}` } : {} });

const detail = async (res: Response) => ((await res.json()) as { detail: string }).detail;

describe("ServiceIdentity: tokens between services", () => {
  it("carries a call through ServiceClient as the user it names", async () => {
    await withService(async (base) => {
      const client = new ServiceClient(base, "files", new ServiceIdentity(SECRET));
      const answer = await client.json(
        "user-1",
        "/internal/files/abc?limit=3",
        z.object({ user: z.string(), method: z.string(), url: z.string() }),
      );
      expect(answer).toEqual({ user: "user-1", method: "GET", url: "/internal/files/abc?limit=3" });
    });
  });

  it("refuses a missing, forged, expired or wrong-audience token", async () => {
    await withService(async (base) => {
      const url = `${base}/internal/files`;
      const missing = await call(url);
      expect(missing.status).toBe(401);
      expect(await detail(missing)).toMatch(/service token is required/);

      const forged = await new ServiceIdentity("another-secret-Qz8wX3vB6nM1kL4jH7gF0dS9").sign("u", "files", {
        method: "GET",
        path: "/internal/files",
      });
      expect((await call(url, forged)).status).toBe(401);

      const past = Math.floor(Date.now() / 1000) - 120;
      const expired = await new SignJWT({ htm: "GET", htu: "/internal/files" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("u")
        .setAudience("locus:files")
        .setIssuer("locus:gateway")
        .setJti("old-token")
        .setIssuedAt(past)
        .setExpirationTime(past + 30)
        .sign(new TextEncoder().encode(SECRET));
      const late = await call(url, expired);
      expect(late.status).toBe(401);
      expect(await detail(late)).toMatch(/invalid or has expired/);

      const forSearch = await new ServiceIdentity(SECRET).sign("u", "search", {
        method: "GET",
        path: "/internal/files",
      });
      expect((await call(url, forSearch)).status).toBe(401);

      // A token without the request it is for (as an older gateway signed them) is refused too.
      const unbound = await new SignJWT({})
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("u")
        .setAudience("locus:files")
        .setIssuer("locus:gateway")
        .setJti("unbound")
        .setIssuedAt()
        .setExpirationTime("30s")
        .sign(new TextEncoder().encode(SECRET));
      expect((await call(url, unbound)).status).toBe(401);
    });
  });

  it("accepts a token once, for the one method, path and query it was signed for", async () => {
    await withService(async (base) => {
      const identity = new ServiceIdentity(SECRET);
      const token = await identity.sign("u", "files", { method: "GET", path: "/internal/files/a?limit=5" });
      // Another path, another query, another method: refused, and the token is not spent by it.
      for (const [path, method] of [
        ["/internal/files/b?limit=5", "GET"],
        ["/internal/files/a?limit=500", "GET"],
        ["/internal/files/a", "GET"],
        ["/internal/files/a?limit=5", "DELETE"],
      ] as const) {
        const res = await call(`${base}${path}`, token, method);
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 401 });
        expect(await detail(res)).toMatch(/issued for another request/);
      }
      expect((await call(`${base}/internal/files/a?limit=5`, token)).status).toBe(200);
      const again = await call(`${base}/internal/files/a?limit=5`, token);
      expect(again.status).toBe(401);
      expect(await detail(again)).toMatch(/already used/);
    });
  });
});
