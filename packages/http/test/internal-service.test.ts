import type { AddressInfo } from "node:net";
import { Router } from "express";
import { z } from "zod";
import { LocusError } from "@locus/contracts";
import { createLogger } from "@locus/runtime";
import { createProcessApp, internalService, ServiceIdentity, wire } from "../src/index.ts";

const SECRET = "Yq3v9XwK2pL7sD0fG5hJ8kZ1cV4bN6mQ-_aRtEuIoP";

const Note = z.object({ id: z.string(), title: z.string(), tags: z.array(z.string()) });
type Note = z.infer<typeof Note>;
const NotePage = z.object({ notes: z.array(Note), next_cursor: z.string().nullable() });
const Tags = z.object({ any: z.array(z.string()) });

/** A small internal API: a JSON body, path params, a query (numbers, JSON), a mapped answer, a 204. */
interface NotesApi {
  add(userId: string, input: { title: string; tags: string[] }): Promise<Note>;
  get(userId: string, noteId: string): Promise<Note>;
  find(
    userId: string,
    options: { limit: number; tags?: z.infer<typeof Tags> | undefined },
  ): Promise<{ notes: Note[]; nextCursor: string | null }>;
  remove(userId: string, noteId: string): Promise<void>;
}

const notes = internalService<NotesApi>("notes", (op) => ({
  add: op({
    method: "POST",
    path: "/internal/notes",
    body: z.object({ title: z.string(), tags: z.array(z.string()) }),
    status: 201,
    answer: Note,
    send: (userId, input) => ({ user: userId, body: input }),
    serve: (api, { user, body }) => api.add(user, body),
  }),
  get: op({
    method: "GET",
    path: "/internal/notes/:id",
    answer: Note,
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: (api, { user, params }) => api.get(user, params.id),
  }),
  find: op({
    method: "GET",
    path: "/internal/notes",
    query: wire.query({ limit: wire.int.default(10), tags: wire.json(Tags, "base64url").optional() }),
    answer: NotePage,
    send: (userId, options) => ({ user: userId, query: options }),
    serve: async (api, { user, query }) => {
      const page = await api.find(user, query);
      return { notes: page.notes, next_cursor: page.nextCursor };
    },
    read: (page) => ({ notes: page.notes, nextCursor: page.next_cursor }),
  }),
  remove: op({
    method: "DELETE",
    path: "/internal/notes/:id",
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: (api, { user, params }) => api.remove(user, params.id),
  }),
}));

// A declaration that does not match its API's method fails typecheck (tsc covers this file).
internalService<Pick<NotesApi, "get">>("notes", (op) => ({
  // @ts-expect-error The answer is a page, not the note `get` returns, and nothing reads it into one.
  get: op({
    method: "GET",
    path: "/internal/notes/:id",
    answer: NotePage,
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: () => Promise.resolve({ notes: [], next_cursor: null }),
  }),
}));
internalService<Pick<NotesApi, "get">>("notes", (op) => ({
  get: op({
    method: "GET",
    path: "/internal/notes/:id",
    answer: Note,
    // @ts-expect-error The path's param is `id`.
    send: (userId, id) => ({ user: userId, params: { noteId: id } }),
    serve: (api, { user, params }) => api.get(user, params.id),
  }),
}));
// @ts-expect-error Every method of the API is declared: `get` is missing.
internalService<Pick<NotesApi, "get">>("notes", () => ({}));

/** Serves `api` through the declarations, on a real port, as its process would; `seen` lists the requests. */
async function withNotes(
  api: NotesApi,
  run: (client: NotesApi, base: string, seen: string[]) => Promise<void>,
): Promise<void> {
  const identity = new ServiceIdentity(SECRET);
  const seen: string[] = [];
  const recorder = Router().use((req, _res, next) => {
    seen.push(`${req.method} ${req.originalUrl}`);
    next();
  });
  const app = createProcessApp({
    logger: createLogger("test", "silent"),
    readiness: () => Promise.resolve({}),
    routers: [recorder, notes.router(identity, api)],
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await run(new notes.Client(base, identity), base, seen);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Keeps each call's arguments (the user first) and answers from a map of notes. */
function notesApi(calls: unknown[][]): NotesApi {
  const stored = new Map<string, Note>([["a/b c", { id: "a/b c", title: "Tides", tags: ["sea"] }]]);
  const found = (id: string) => {
    const note = stored.get(id);
    if (!note) throw new LocusError("not_found", "No such note.");
    return note;
  };
  return {
    add: (userId, input) => {
      calls.push(["add", userId, input]);
      const note = { id: "n2", ...input };
      stored.set(note.id, note);
      return Promise.resolve(note);
    },
    get: (userId, id) => {
      calls.push(["get", userId, id]);
      return Promise.resolve(found(id));
    },
    find: (userId, options) => {
      calls.push(["find", userId, options]);
      return Promise.resolve({ notes: [...stored.values()], nextCursor: "next" });
    },
    remove: (userId, id) => {
      calls.push(["remove", userId, id]);
      found(id);
      stored.delete(id);
      return Promise.resolve();
    },
  };
}

describe("internalService: one declaration, its route and its client", () => {
  it("carries every call there and back, in the wire's shape in between", async () => {
    const calls: unknown[][] = [];
    await withNotes(notesApi(calls), async (client, _base, seen) => {
      expect(await client.add("u1", { title: "Gales", tags: ["wind"] })).toEqual({
        id: "n2",
        title: "Gales",
        tags: ["wind"],
      });
      expect(await client.get("u1", "a/b c")).toEqual({ id: "a/b c", title: "Tides", tags: ["sea"] });
      const page = await client.find("u1", { limit: 5, tags: { any: ["sea"] } });
      expect(page.nextCursor).toBe("next");
      expect(page.notes.map((n) => n.id)).toEqual(["a/b c", "n2"]);
      await client.find("u2", { limit: 7 });
      await expect(client.remove("u1", "n2")).resolves.toBeUndefined();
      // The callee's refusal comes back as its LocusError.
      await expect(client.get("u1", "n2")).rejects.toMatchObject({
        code: "not_found",
        message: "No such note.",
      });

      expect(calls).toEqual([
        ["add", "u1", { title: "Gales", tags: ["wind"] }],
        ["get", "u1", "a/b c"],
        ["find", "u1", { limit: 5, tags: { any: ["sea"] } }],
        ["find", "u2", { limit: 7 }],
        ["remove", "u1", "n2"],
        ["get", "u1", "n2"],
      ]);
      const tags = Buffer.from(JSON.stringify({ any: ["sea"] })).toString("base64url");
      expect(seen).toEqual([
        "POST /internal/notes",
        "GET /internal/notes/a%2Fb%20c",
        `GET /internal/notes?limit=5&tags=${tags}`,
        "GET /internal/notes?limit=7",
        "DELETE /internal/notes/n2",
        "GET /internal/notes/n2",
      ]);
    });
  });

  it("answers with the declared status: 201 for a creation, 204 without an answer", async () => {
    await withNotes(notesApi([]), async (_client, base) => {
      const identity = new ServiceIdentity(SECRET);
      const as = async (method: string, path: string) => ({
        Authorization: `Bearer ${await identity.sign("u1", "notes", { method, path })}`,
      });
      const created = await fetch(`${base}/internal/notes`, {
        method: "POST",
        headers: { ...(await as("POST", "/internal/notes")), "Content-Type": "application/json" },
        body: JSON.stringify({ title: "T", tags: [] }),
      });
      expect(created.status).toBe(201);
      const removed = await fetch(`${base}/internal/notes/n2`, {
        method: "DELETE",
        headers: await as("DELETE", "/internal/notes/n2"),
      });
      expect(removed.status).toBe(204);
      expect(await removed.text()).toBe("");
    });
  });

  it("refuses what a gateway of another version sends: a 400 naming the field", async () => {
    await withNotes(notesApi([]), async (_client, base) => {
      const identity = new ServiceIdentity(SECRET);
      for (const [path, field] of [
        ["/internal/notes?limit=ten", "limit"],
        [`/internal/notes?tags=${Buffer.from("{not json").toString("base64url")}`, "tags"],
        [`/internal/notes?tags=${Buffer.from('{"any":"sea"}').toString("base64url")}`, "tags"],
      ] as const) {
        const token = await identity.sign("u1", "notes", { method: "GET", path });
        const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
        expect(res.status).toBe(400);
        expect(res.headers.get("x-locus-error-code")).toBe("bad_request");
        expect(await res.json()).toEqual({ detail: `The ${field} sent by the gateway could not be read.` });
      }
      // The token is checked first: without one, nothing is read.
      expect((await fetch(`${base}/internal/notes?limit=ten`)).status).toBe(401);
    });
  });

  it("rejects an answer that does not match its schema (a callee of another version)", async () => {
    const api = notesApi([]);
    api.get = () => Promise.resolve({ id: "a", title: 7 } as unknown as Note);
    await withNotes(api, async (client) => {
      const err = await client.get("u1", "a").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LocusError);
      expect(err).toMatchObject({ code: "internal" });
      expect((err as LocusError).message).toMatch(
        /notes service's answer to GET \/internal\/notes\/a does not match the schema .* at title/,
      );
    });
  });
});
