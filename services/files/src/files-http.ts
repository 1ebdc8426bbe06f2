import { Readable } from "node:stream";
import { Router, type Request } from "express";
import {
  FileFilter,
  FileListPageDto,
  FileMetadata,
  FilePassagesDto,
  FileRecordDto,
  LocusError,
  PreviewUrlDto,
} from "@locus/contracts";
import { callerOf, ServiceClient, type ServiceIdentity } from "@locus/http";
import type { User, UserStore } from "@locus/metadata-store";
import type { FileListOptions, FileListPage, FilesApi, PreviewLink, UploadInput } from "./files-api.ts";
import type { PreviewGrant } from "./preview-tokens.ts";

const UPLOAD_TIMEOUT_MS = 15 * 60_000;

/**
 * Internal values as JSON in base64url (a header, a query parameter), checked against their schema
 * on arrival: the gateway validated them for the client, this guards against a mismatched version.
 */
const encodeJson = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
function decodeJson<T>(schema: { parse(value: unknown): T }, encoded: string, what: string): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(encoded, "base64url").toString("utf8")));
  } catch {
    throw new LocusError("bad_request", `The ${what} sent by the gateway could not be read.`);
  }
}

/**
 * The files process's internal interface: the gateway authenticates the caller, then calls here
 * as the user its service token names. Uploads arrive as the raw bytes of the file (the gateway
 * has already taken the multipart body apart), streamed through. Never exposed publicly.
 */
export function filesInternalRouter(files: FilesApi, store: UserStore, identity: ServiceIdentity): Router {
  const router = Router();
  const guard = identity.require("files");
  const userOf = async (userId: string): Promise<User> => {
    const user = await store.findUserById(userId);
    if (!user) throw new LocusError("unauthorized", "The account no longer exists.");
    return user;
  };
  const param = (req: Request, name: string) => String(req.params[name] ?? "");

  router.post("/internal/files", guard, async (req, res) => {
    const user = await userOf(callerOf(res));
    const originalName = decodeURIComponent(String(req.headers["x-locus-file-name"] ?? ""));
    const metadataHeader = req.headers["x-locus-file-metadata"];
    const metadata =
      typeof metadataHeader === "string" ? decodeJson(FileMetadata, metadataHeader, "metadata") : undefined;
    res.json(await files.upload(user, { originalName, body: req, metadata }));
  });
  router.post("/internal/files/:id/announce", guard, async (req, res) => {
    await files.announceUpload(await userOf(callerOf(res)), param(req, "id"));
    res.status(204).end();
  });
  router.post("/internal/files/:id/discard", guard, async (req, res) => {
    await files.discardUpload(await userOf(callerOf(res)), param(req, "id"));
    res.status(204).end();
  });
  router.get("/internal/files", guard, async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    const page = await files.list(callerOf(res), {
      limit: Number(query.limit ?? 1000),
      cursor: query.cursor,
      filter: query.filter === undefined ? undefined : decodeJson(FileFilter, query.filter, "filter"),
    });
    res.json({ files: page.files, next_cursor: page.nextCursor } satisfies FileListPageDto);
  });
  router.get("/internal/files/:id", guard, async (req, res) => {
    res.json(await files.get(callerOf(res), param(req, "id")));
  });
  router.delete("/internal/files/:id", guard, async (req, res) => {
    await files.delete(callerOf(res), param(req, "id"));
    res.status(204).end();
  });
  router.get("/internal/files/:id/passages", guard, async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    res.json(
      await files.passages(callerOf(res), param(req, "id"), {
        offset: Number(query.offset ?? 0),
        limit: Number(query.limit ?? 100),
      }),
    );
  });
  router.get("/internal/files/:id/preview-link", guard, async (req, res) => {
    const {
      base_url: base,
      key_id: keyId,
      session_id: sessionId,
    } = req.query as Record<string, string | undefined>;
    const grant: PreviewGrant | null = keyId ? { keyId } : sessionId ? { sessionId } : null;
    if (!grant)
      throw new LocusError("bad_request", "A preview link needs the key or session that asks for it.");
    const link = await files.previewLink(callerOf(res), param(req, "id"), base ?? "", grant);
    res.json({
      url: link.url,
      ...(link.originalUrl ? { original_url: link.originalUrl } : {}),
      expires_at: link.expiresAt.toISOString(),
      expires_in: link.expiresIn,
    } satisfies PreviewUrlDto);
  });
  return router;
}

/**
 * FilesApi over HTTP, for a gateway that runs apart from the files service. Every answer is
 * checked against its schema, so a files process of another version fails loudly, not subtly.
 */
export class FilesHttpClient implements FilesApi {
  private readonly client: ServiceClient;

  constructor(baseUrl: string, identity: ServiceIdentity) {
    this.client = new ServiceClient(baseUrl, "files", identity);
  }

  upload(user: User, input: UploadInput): Promise<FileRecordDto> {
    return this.client.json(user.id, "/internal/files", FileRecordDto, {
      method: "POST",
      headers: {
        "Content-Type": "application/octet-stream",
        "X-Locus-File-Name": encodeURIComponent(input.originalName),
        ...(input.metadata ? { "X-Locus-File-Metadata": encodeJson(input.metadata) } : {}),
      },
      body: Readable.toWeb(input.body) as ReadableStream<Uint8Array>,
      // Streamed request bodies need half-duplex in fetch.
      duplex: "half",
      timeoutMs: UPLOAD_TIMEOUT_MS,
    } as RequestInit & { duplex: "half"; timeoutMs: number });
  }

  async announceUpload(user: User, fileId: string): Promise<void> {
    await this.client.request(user.id, `/internal/files/${encodeURIComponent(fileId)}/announce`, {
      method: "POST",
    });
  }

  async discardUpload(user: User, fileId: string): Promise<void> {
    await this.client.request(user.id, `/internal/files/${encodeURIComponent(fileId)}/discard`, {
      method: "POST",
    });
  }

  async list(userId: string, options: FileListOptions): Promise<FileListPage> {
    const params = new URLSearchParams({ limit: String(options.limit) });
    if (options.cursor !== undefined) params.set("cursor", options.cursor);
    if (options.filter !== undefined) params.set("filter", encodeJson(options.filter));
    const body = await this.client.json(userId, `/internal/files?${params.toString()}`, FileListPageDto);
    return { files: body.files, nextCursor: body.next_cursor };
  }

  get(userId: string, fileId: string): Promise<FileRecordDto> {
    return this.client.json(userId, `/internal/files/${encodeURIComponent(fileId)}`, FileRecordDto);
  }

  async delete(userId: string, fileId: string): Promise<void> {
    await this.client.request(userId, `/internal/files/${encodeURIComponent(fileId)}`, { method: "DELETE" });
  }

  async previewLink(
    userId: string,
    fileId: string,
    baseUrl: string,
    grant: PreviewGrant,
  ): Promise<PreviewLink> {
    const params = new URLSearchParams({ base_url: baseUrl });
    if ("keyId" in grant) params.set("key_id", grant.keyId);
    else params.set("session_id", grant.sessionId);
    const body = await this.client.json(
      userId,
      `/internal/files/${encodeURIComponent(fileId)}/preview-link?${params.toString()}`,
      PreviewUrlDto,
    );
    return {
      url: body.url,
      originalUrl: body.original_url,
      expiresAt: new Date(body.expires_at),
      expiresIn: body.expires_in,
    };
  }

  async passages(
    userId: string,
    fileId: string,
    page: { offset: number; limit: number },
  ): Promise<FilePassagesDto> {
    const params = new URLSearchParams({ offset: String(page.offset), limit: String(page.limit) });
    return this.client.json(
      userId,
      `/internal/files/${encodeURIComponent(fileId)}/passages?${params.toString()}`,
      FilePassagesDto,
    );
  }
}
