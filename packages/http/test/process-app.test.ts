import type { AddressInfo } from "node:net";
import { Router, type Express } from "express";
import { createLogger } from "@locus/runtime";
import { createProcessApp } from "../src/index.ts";

/**
 * What every process's HTTP side tells its observer, behind a real server on a loopback port:
 * routes as declared (never an id), and /metrics only where asked for.
 */
describe("createProcessApp's metrics", () => {
  const answered: { method: string; route: string; status: number }[] = [];
  const routes = Router();
  routes.get("/api/files/:file_id", (req, res) => {
    res.json({ id: req.params.file_id });
  });
  routes.get(["/dashboard", "/dashboard/"], (_req, res) => {
    res.send("page");
  });
  const assets = Router();
  assets.use((_req, res) => {
    res.send("asset");
  });
  routes.use("/assets", assets);

  const serve = async (app: Express) => {
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
  };
  const appWith = (metrics: boolean) =>
    createProcessApp({
      logger: createLogger("test", "silent"),
      readiness: () => Promise.resolve({}),
      routers: [routes],
      observer: { requestAnswered: (method, route, status) => answered.push({ method, route, status }) },
      metrics: metrics
        ? { exposition: () => Promise.resolve({ contentType: "text/plain; version=0.0.4", body: "up 1\n" }) }
        : undefined,
    });

  it("labels each answer with its declared route, a mount, or `unmatched`", async () => {
    const { base, server } = await serve(appWith(false));
    try {
      for (const path of [
        "/api/files/3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        "/dashboard/",
        "/assets/app.js",
        "/api/nowhere/3f2504e0",
        "/metrics",
      ]) {
        await (await fetch(`${base}${path}`)).text();
      }
      // The observer is told when the answer has been sent: wait for the last one.
      const deadline = Date.now() + 5_000;
      while (answered.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(answered).toEqual([
        { method: "GET", route: "/api/files/:file_id", status: 200 },
        { method: "GET", route: "/dashboard", status: 200 },
        { method: "GET", route: "/assets", status: 200 },
        { method: "GET", route: "unmatched", status: 404 },
        { method: "GET", route: "unmatched", status: 404 },
      ]);
    } finally {
      server.close();
      answered.length = 0;
    }
  });

  it("tells the observer nothing of probes and scrapes, so they never dilute the API's error share", async () => {
    const { base, server } = await serve(appWith(true));
    try {
      for (const path of ["/healthz", "/readyz", "/metrics", "/api/files/3f2504e0", "/healthz"]) {
        await (await fetch(`${base}${path}`)).text();
      }
      const deadline = Date.now() + 5_000;
      while (answered.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      // The last probe is answered after the API request: give its "finish" the same chance.
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toEqual([{ method: "GET", route: "/api/files/:file_id", status: 200 }]);
    } finally {
      server.close();
      answered.length = 0;
    }
  });

  it("serves /metrics, uncached, when given them", async () => {
    const { base, server } = await serve(appWith(true));
    try {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(await res.text()).toBe("up 1\n");
    } finally {
      server.close();
    }
  });
});
