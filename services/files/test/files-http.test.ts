import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { Router } from "express";
import type { FileRecordDto } from "@locus/contracts";
import { createProcessApp, ServiceIdentity } from "@locus/http";
import type { User, UserStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import type { FilesApi } from "../src/files-api.ts";
import { FilesHttpClient, filesInternalRouter } from "../src/files-http.ts";

const SECRET = "Yq3v9XwK2pL7sD0fG5hJ8kZ1cV4bN6mQ-_aRtEuIoP";
const AT = "2026-01-02T03:04:05.000Z";
const record: FileRecordDto = {
  id: "f/1",
  original_name: "ré sumé.pdf",
  status: "ready",
  file_type: "pdf",
  mime_type: "application/pdf",
  size_bytes: 3,
  page_count: 1,
  duration_s: null,
  passage_count: 0,
  progress: null,
  metadata: { year: 2024 },
  error: null,
  created_at: AT,
  updated_at: AT,
};

/** FilesApi in memory: keeps each call (the user's id first) and answers with `record`. */
function filesApi(calls: unknown[][]): FilesApi {
  const call = <T>(name: string, userId: string, args: unknown[], answer: T) => {
    calls.push([name, userId, ...args]);
    return Promise.resolve(answer);
  };
  return {
    upload: async (user, input) => {
      const chunks: Buffer[] = [];
      for await (const chunk of input.body) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks).toString();
      return call("upload", user.id, [input.originalName, bytes, input.metadata], record);
    },
    announceUpload: (user, id) => call("announceUpload", user.id, [id], undefined),
    discardUpload: (user, id) => call("discardUpload", user.id, [id], undefined),
    list: (userId, options) => call("list", userId, [options], { files: [record], nextCursor: "c2" }),
    get: (userId, id) => call("get", userId, [id], record),
    delete: (userId, id) => call("delete", userId, [id], undefined),
    previewLink: (userId, id, baseUrl, grant) =>
      call("previewLink", userId, [id, baseUrl, grant], {
        url: `${baseUrl}/p/1`,
        ...("keyId" in grant ? { originalUrl: `${baseUrl}/o/1` } : {}),
        expiresAt: new Date(AT),
        expiresIn: 3600 as const,
      }),
    passages: (userId, id, page) =>
      call("passages", userId, [id, page], { passages: [], next_offset: null, next_cursor: null }),
  };
}

describe("files over internal HTTP: FilesHttpClient and filesInternalRouter", () => {
  it("carries every call of FilesApi there and back, on the wire as before", async () => {
    const identity = new ServiceIdentity(SECRET);
    const calls: unknown[][] = [];
    const seen: string[] = [];
    const recorder = Router().use((req, _res, next) => {
      const headers = ["x-locus-file-name", "x-locus-file-metadata"]
        .map((h) => req.headers[h])
        .filter(Boolean);
      seen.push([req.method, req.originalUrl, ...headers].join(" "));
      next();
    });
    const store = { findUserById: (id: string) => Promise.resolve({ id } as User) } as UserStore;
    const app = createProcessApp({
      logger: createLogger("test", "silent"),
      readiness: () => Promise.resolve({}),
      routers: [recorder, filesInternalRouter(filesApi(calls), store, identity)],
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const files = new FilesHttpClient(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        identity,
      );
      const user = { id: "u1" } as User;
      const filter = { fileTypes: ["pdf" as const], metadata: { year: "2024" } };

      expect(
        await files.upload(user, {
          originalName: "ré sumé.pdf",
          body: Readable.from([Buffer.from("abc")]),
          metadata: { year: 2024 },
        }),
      ).toEqual(record);
      await files.announceUpload(user, "f/1");
      await files.discardUpload(user, "f/1");
      expect(await files.list("u1", { limit: 10, cursor: "c1", filter })).toEqual({
        files: [record],
        nextCursor: "c2",
      });
      await files.list("u1", { limit: 1000 });
      expect(await files.get("u1", "f/1")).toEqual(record);
      await files.delete("u1", "f/1");
      expect(await files.previewLink("u1", "f/1", "https://locus.test", { keyId: "k1" })).toEqual({
        url: "https://locus.test/p/1",
        originalUrl: "https://locus.test/o/1",
        expiresAt: new Date(AT),
        expiresIn: 3600,
      });
      expect(await files.previewLink("u1", "f/1", "https://locus.test", { sessionId: "s1" })).toEqual({
        url: "https://locus.test/p/1",
        originalUrl: undefined,
        expiresAt: new Date(AT),
        expiresIn: 3600,
      });
      expect(await files.passages("u1", "f/1", { offset: 20, limit: 10 })).toEqual({
        passages: [],
        next_offset: null,
        next_cursor: null,
      });

      expect(calls).toEqual([
        ["upload", "u1", "ré sumé.pdf", "abc", { year: 2024 }],
        ["announceUpload", "u1", "f/1"],
        ["discardUpload", "u1", "f/1"],
        ["list", "u1", { limit: 10, cursor: "c1", filter }],
        ["list", "u1", { limit: 1000 }],
        ["get", "u1", "f/1"],
        ["delete", "u1", "f/1"],
        ["previewLink", "u1", "f/1", "https://locus.test", { keyId: "k1" }],
        ["previewLink", "u1", "f/1", "https://locus.test", { sessionId: "s1" }],
        ["passages", "u1", "f/1", { offset: 20, limit: 10 }],
      ]);
      const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
      expect(seen).toEqual([
        `POST /internal/files r%C3%A9%20sum%C3%A9.pdf ${base64url({ year: 2024 })}`,
        "POST /internal/files/f%2F1/announce",
        "POST /internal/files/f%2F1/discard",
        `GET /internal/files?limit=10&cursor=c1&filter=${base64url(filter)}`,
        "GET /internal/files?limit=1000",
        "GET /internal/files/f%2F1",
        "DELETE /internal/files/f%2F1",
        "GET /internal/files/f%2F1/preview-link?base_url=https%3A%2F%2Flocus.test&key_id=k1",
        "GET /internal/files/f%2F1/preview-link?base_url=https%3A%2F%2Flocus.test&session_id=s1",
        "GET /internal/files/f%2F1/passages?offset=20&limit=10",
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
