import type { AddressInfo } from "node:net";
import { Router } from "express";
import type { SearchResponseDto } from "@locus/contracts";
import { createProcessApp, ServiceIdentity } from "@locus/http";
import { createLogger } from "@locus/runtime";
import { SearchHttpClient, searchInternalRouter } from "../src/search-http.ts";
import type { SearchApi, SearchRequest } from "../src/search-service.ts";

const SECRET = "Yq3v9XwK2pL7sD0fG5hJ8kZ1cV4bN6mQ-_aRtEuIoP";

describe("search over internal HTTP: SearchHttpClient and searchInternalRouter", () => {
  it("carries a search there and back, on the wire as before", async () => {
    const identity = new ServiceIdentity(SECRET);
    const requests: SearchRequest[] = [];
    const answer: SearchResponseDto = {
      results: [],
      count: 0,
      next_offset: null,
      next_cursor: null,
      mode: "quick",
    };
    const search: SearchApi = {
      search: (request) => {
        requests.push(request);
        return Promise.resolve(answer);
      },
    };
    const seen: string[] = [];
    const recorder = Router().use((req, _res, next) => {
      seen.push(`${req.method} ${req.originalUrl}`);
      next();
    });
    const app = createProcessApp({
      logger: createLogger("test", "silent"),
      readiness: () => Promise.resolve({}),
      routers: [recorder, searchInternalRouter(search, identity)],
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const client = new SearchHttpClient(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        identity,
      );
      const filter = { fileTypes: ["pdf" as const], createdAfter: "2026-01-01T00:00:00.000Z" };
      expect(await client.search({ userId: "u1", q: "harbour & gale", limit: 10, mode: "quick" })).toEqual(
        answer,
      );
      await client.search({ userId: "u2", q: "tides", limit: 5, mode: "ai", offset: 20, filter });
      await client.search({ userId: "u3", q: "x", limit: 5, mode: "quick", offset: 0 });

      expect(requests).toEqual([
        { userId: "u1", q: "harbour & gale", limit: 10, mode: "quick" },
        { userId: "u2", q: "tides", limit: 5, mode: "ai", offset: 20, filter },
        { userId: "u3", q: "x", limit: 5, mode: "quick" },
      ]);
      expect(seen).toEqual([
        "GET /internal/search?q=harbour+%26+gale&limit=10&mode=quick",
        `GET /internal/search?q=tides&limit=5&mode=ai&offset=20&${new URLSearchParams({ filter: JSON.stringify(filter) }).toString()}`,
        "GET /internal/search?q=x&limit=5&mode=quick",
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
