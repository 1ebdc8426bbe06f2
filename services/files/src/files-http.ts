import type { Router } from "express";
import {
  FileFilter,
  FileListPageDto,
  FileMetadata,
  FilePassagesDto,
  FileRecordDto,
  LocusError,
  PreviewUrlDto,
} from "@locus/contracts";
import { callerOf, fromGateway, internalService, wire, type ServiceIdentity } from "@locus/http";
import type { User, UserStore } from "@locus/metadata-store";
import type { FilesApi, UploadInput } from "./files-api.ts";

const UPLOAD_TIMEOUT_MS = 15 * 60_000;

/** An upload's metadata travels in a header, as base64url JSON. */
const MetadataHeader = wire.json(FileMetadata, "base64url");

/** What the files process serves the gateway with: the API, and the user a token names. */
interface FilesServer {
  files: FilesApi;
  userOf: (userId: string) => Promise<User>;
}

/**
 * The files process's internal interface: the gateway authenticates the caller, then calls here
 * as the user its service token names. Never exposed publicly. The upload is written by hand below.
 */
const internal = internalService<Omit<FilesApi, "upload">, FilesServer>("files", (op) => ({
  announceUpload: op({
    method: "POST",
    path: "/internal/files/:id/announce",
    send: (user, id) => ({ user: user.id, params: { id } }),
    serve: async ({ files, userOf }, { user, params }) => files.announceUpload(await userOf(user), params.id),
  }),
  discardUpload: op({
    method: "POST",
    path: "/internal/files/:id/discard",
    send: (user, id) => ({ user: user.id, params: { id } }),
    serve: async ({ files, userOf }, { user, params }) => files.discardUpload(await userOf(user), params.id),
  }),
  list: op({
    method: "GET",
    path: "/internal/files",
    query: wire.query({
      limit: wire.int.default(1000),
      cursor: wire.text.optional(),
      filter: wire.json(FileFilter, "base64url").optional(),
    }),
    answer: FileListPageDto,
    send: (userId, options) => ({ user: userId, query: options }),
    serve: async ({ files }, { user, query }) => {
      const page = await files.list(user, query);
      return { files: page.files, next_cursor: page.nextCursor };
    },
    read: (page) => ({ files: page.files, nextCursor: page.next_cursor }),
  }),
  get: op({
    method: "GET",
    path: "/internal/files/:id",
    answer: FileRecordDto,
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: ({ files }, { user, params }) => files.get(user, params.id),
  }),
  delete: op({
    method: "DELETE",
    path: "/internal/files/:id",
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: ({ files }, { user, params }) => files.delete(user, params.id),
  }),
  previewLink: op({
    method: "GET",
    path: "/internal/files/:id/preview-link",
    query: wire.query({
      base_url: wire.text.default(""),
      key_id: wire.text.optional(),
      session_id: wire.text.optional(),
    }),
    answer: PreviewUrlDto,
    send: (userId, id, baseUrl, grant) => ({
      user: userId,
      params: { id },
      query: {
        base_url: baseUrl,
        ...("keyId" in grant ? { key_id: grant.keyId } : { session_id: grant.sessionId }),
      },
    }),
    serve: async ({ files }, { user, params, query }) => {
      const { key_id: keyId, session_id: sessionId } = query;
      const grant = keyId ? { keyId } : sessionId ? { sessionId } : null;
      if (!grant)
        throw new LocusError("bad_request", "A preview link needs the key or session that asks for it.");
      const link = await files.previewLink(user, params.id, query.base_url, grant);
      return {
        url: link.url,
        ...(link.originalUrl ? { original_url: link.originalUrl } : {}),
        expires_at: link.expiresAt.toISOString(),
        expires_in: link.expiresIn,
      };
    },
    read: (link) => ({
      url: link.url,
      originalUrl: link.original_url,
      expiresAt: new Date(link.expires_at),
      expiresIn: link.expires_in,
    }),
  }),
  passages: op({
    method: "GET",
    path: "/internal/files/:id/passages",
    query: wire.query({ offset: wire.int.default(0), limit: wire.int.default(100) }),
    answer: FilePassagesDto,
    send: (userId, id, page) => ({ user: userId, params: { id }, query: page }),
    serve: ({ files }, { user, params, query }) => files.passages(user, params.id, query),
  }),
}));

/**
 * The routers of the declarations above, and the upload: it arrives as the raw bytes of the file
 * (the gateway has already taken the multipart body apart), streamed through, with its name and
 * metadata in headers. Hand-written, as is its client: it is the one call with a streamed body,
 * headers and its own time limit, three things no other declaration would use.
 */
export function filesInternalRouter(files: FilesApi, store: UserStore, identity: ServiceIdentity): Router {
  const userOf = async (userId: string): Promise<User> => {
    const user = await store.findUserById(userId);
    if (!user) throw new LocusError("unauthorized", "The account no longer exists.");
    return user;
  };
  const router = internal.router(identity, { files, userOf });
  router.post("/internal/files", identity.require(internal.audience), async (req, res) => {
    const user = await userOf(callerOf(res));
    const originalName = decodeURIComponent(String(req.headers["x-locus-file-name"] ?? ""));
    const metadataHeader = req.headers["x-locus-file-metadata"];
    const metadata =
      typeof metadataHeader === "string"
        ? fromGateway(MetadataHeader, metadataHeader, "metadata")
        : undefined;
    res.json(await files.upload(user, { originalName, body: req, metadata }));
  });
  return router;
}

/**
 * FilesApi over HTTP, for a gateway that runs apart from the files service. Every answer is
 * checked against its schema, so a files process of another version fails loudly, not subtly.
 */
export class FilesHttpClient extends internal.Client implements FilesApi {
  upload(user: User, input: UploadInput): Promise<FileRecordDto> {
    return this.client.json(user.id, "/internal/files", FileRecordDto, {
      method: "POST",
      headers: {
        "Content-Type": "application/octet-stream",
        "X-Locus-File-Name": encodeURIComponent(input.originalName),
        ...(input.metadata ? { "X-Locus-File-Metadata": MetadataHeader.encode(input.metadata) } : {}),
      },
      body: input.body,
      timeoutMs: UPLOAD_TIMEOUT_MS,
    });
  }
}
