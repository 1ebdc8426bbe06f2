import { Router, type Request } from "express";
import multer from "multer";
import { type FileDeletedDto, type PreviewUrlDto, type UploadedFileDto } from "@locus/contracts";
import { inlineContentDisposition } from "@locus/blob-store";
import type { FilesApi } from "@locus/files";
import type { ActivityKind, MetadataStore, Plan, User } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import type { SearchApi } from "@locus/search";
import type { WebhooksApi } from "@locus/webhooks";
import { authenticate, type KeyRefusal, type Principal, type SessionAuthenticator } from "./authenticate.ts";
import { docsRouter } from "./docs.ts";
import { openApiDocument } from "./openapi.ts";
import { setNextLink } from "./paging.ts";
import type { LimiterCounters } from "@locus/http";
import type { KeyLookup } from "./key-lookup-cache.ts";
import { rateLimit } from "./rate-limit.ts";
import { SAMPLE_PDF, SANDBOX_FILE_NAME } from "./sandbox.ts";
import { apisChooser } from "./sandbox-apis.ts";
import { metadataAfterFile, notAnUpload } from "./upload-metadata.ts";
import { metadataFieldCount, UploadStorage, type StoredUpload } from "./upload-storage.ts";
import { webhookRoutes } from "./webhooks-routes.ts";
import {
  deleteFile,
  getFile,
  getPreviewUrl,
  listFilePassages,
  listFiles,
  search,
  uploadFile,
} from "./operations/files.ts";
import { mountRoutes, on } from "./operations/routes.ts";
import { missing, RequestValidationError } from "./operations/rules.ts";

export interface GatewayDeps {
  store: MetadataStore;
  /** Where request keys are looked up: the store, or a KeyLookupCache over it. */
  keys: KeyLookup;
  files: FilesApi;
  search: SearchApi;
  /** The webhooks service, here or over HTTP; without it (a split gateway not told where), 503s. */
  webhooks?: WebhooksApi | undefined;
  logger: Logger;
  maxUploadBytes: number;
  rateLimits: Record<Plan, number>;
  /** Where rate limits are counted (shared by several gateway replicas, or not); in memory without it. */
  limiterCounters?: LimiterCounters | undefined;
  publicUrl: string | undefined;
  /** Dashboard sessions, accepted instead of a key when the dashboard is served. */
  sessions?: SessionAuthenticator | undefined;
  /** Told of refused keys and rate-limited requests (metrics). */
  observer?: GatewayObserver | undefined;
}

/** What the gateway tells whoever counts. */
export interface GatewayObserver {
  keyRefused(reason: KeyRefusal): void;
  rateLimitRefused(plan: Plan): void;
}

/**
 * The public HTTP interface: authentication, rate limits, the sandbox, validation, routing to
 * the files and search services (in this process or over HTTP, behind the same interfaces).
 */
export function createGatewayRouter(deps: GatewayDeps): Router {
  const app = Router();

  app.get("/openapi.json", (_req, res) => {
    res.json(openApiDocument);
  });
  app.use(docsRouter());

  app.get("/previews/sandbox", (_req, res) => {
    res.setHeader("Content-Type", "application/pdf");
    res.setHeader("Content-Disposition", inlineContentDisposition(SANDBOX_FILE_NAME));
    res.send(SAMPLE_PDF);
  });

  const guard = [
    authenticate(deps.keys, deps.store, deps.logger, deps.sessions, (reason) =>
      deps.observer?.keyRefused(reason),
    ),
    rateLimit(deps.rateLimits, deps.limiterCounters, (plan) => deps.observer?.rateLimitRefused(plan)),
  ];
  // Test keys are answered by the sandbox's APIs, live keys and sessions by the services.
  const apisFor = apisChooser(deps, deps.maxUploadBytes);
  /**
   * Asks for an upload's processing. If the files service cannot be told now, the file is stored
   * and recorded all the same: the stall sweep publishes it, so the upload still succeeds.
   */
  const announce = async (files: FilesApi, user: User, fileId: string): Promise<void> => {
    try {
      await files.announceUpload(user, fileId);
    } catch (err) {
      deps.logger.warn({ err, fileId }, "could not announce the upload; the stall sweep will");
    }
  };
  /**
   * Counts a live key's (or dashboard page's) search or upload for the usage page, once it has
   * succeeded: per day and key, one upsert, not awaited. Test keys count nothing. A count that
   * cannot be written is logged, never an error for the request it counts.
   */
  const countActivity = (principal: Principal, kind: ActivityKind): void => {
    if (principal.sandbox) return;
    const day = new Date().toISOString().slice(0, 10);
    deps.store
      .recordActivity({ userId: principal.user.id, keyId: principal.key?.id ?? null, day, kind })
      .catch((err: unknown) => deps.logger.warn({ err, kind }, "could not count the day's usage"));
  };
  // LOCUS_PUBLIC_URL when set; otherwise as the client reached Locus: req.protocol and req.host
  // take X-Forwarded-Proto and X-Forwarded-Host from a trusted proxy (LOCUS_TRUST_PROXY) only.
  const baseUrl = (req: Request) => deps.publicUrl ?? `${req.protocol}://${req.host ?? "localhost"}`;

  mountRoutes(app, guard, [
    on(search, async ({ q, limit, mode, offset, cursor, filter }, principal, req, res) => {
      const request = { userId: principal.user.id, q, limit, mode, offset: cursor ?? offset, filter };
      const found = await apisFor(principal).search.search(request);
      setNextLink(search, req, res, baseUrl(req), found.next_cursor);
      res.json(found);
      countActivity(principal, "search");
    }),
    on(uploadFile, (_input, principal, req, res, next) => {
      const { files } = apisFor(principal);
      let accepted = false;
      const upload = multer({
        storage: new UploadStorage(principal.user, files),
        defParamCharset: "utf8",
        limits: { fileSize: deps.maxUploadBytes, files: 8, parts: 32, fields: 16, fieldSize: 64 * 1024 },
        // Only the first part named `file` is the upload; other file parts are read and dropped.
        fileFilter: (_r, file, cb) => {
          const take = file.fieldname === "file" && !accepted;
          if (take) accepted = true;
          cb(null, take);
        },
      }).any();
      upload(req, res, (err: unknown) => {
        if (err) {
          next(err);
          return;
        }
        const parts = (req.files ?? []) as (Express.Multer.File & Partial<StoredUpload>)[];
        const stored = parts.find((f) => f.fieldname === "file" && f.dto);
        if (stored?.dto && metadataFieldCount(req.body) > (stored.metadataFieldsRead ?? 0)) {
          // A metadata field came after the file, which was stored without it: undo the upload
          // rather than keep a file without (or with an older version of) what its uploader said.
          void files
            .discardUpload(principal.user, stored.dto.id)
            .then(() => next(new RequestValidationError([metadataAfterFile()])), next);
          return;
        }
        if (stored?.dto) {
          // Only now, with the whole request in, is the file processed: an upload whose request
          // broke off was discarded (and refunded) before anything was spent on it.
          const uploaded: UploadedFileDto = { file: stored.dto };
          countActivity(principal, "upload");
          void announce(files, principal.user, stored.dto.id).then(() => res.json(uploaded), next);
          return;
        }
        const body = req.body as Record<string, unknown> | undefined;
        const asField = body?.file;
        if (typeof asField === "string") {
          next(new RequestValidationError([notAnUpload(asField)]));
          return;
        }
        next(new RequestValidationError([missing(["body", "file"])]));
      });
    }),
    on(listFiles, async ({ limit, cursor, filter }, principal, req, res) => {
      const page = await apisFor(principal).files.list(principal.user.id, { limit, cursor, filter });
      // A bare array (the seed's shape): the next cursor travels in a header of its own.
      if (page.nextCursor) res.setHeader("X-Next-Cursor", page.nextCursor);
      setNextLink(listFiles, req, res, baseUrl(req), page.nextCursor);
      res.json(page.files);
    }),
    on(getFile, async ({ file_id }, principal, _req, res) => {
      res.json(await apisFor(principal).files.get(principal.user.id, file_id));
    }),
    on(deleteFile, async ({ file_id }, principal, _req, res) => {
      const apis = apisFor(principal);
      await apis.files.delete(principal.user.id, file_id);
      res.json({ message: "File deleted", id: file_id, ...apis.sandboxField } satisfies FileDeletedDto);
    }),
    on(getPreviewUrl, async ({ file_id }, principal, req, res) => {
      const apis = apisFor(principal);
      // The link lives only as long as the key (or dashboard session) that asked for it.
      const grant = principal.key ? { keyId: principal.key.id } : { sessionId: principal.sessionId ?? "" };
      const link = await apis.files.previewLink(principal.user.id, file_id, baseUrl(req), grant);
      res.json({
        url: link.url,
        ...(link.originalUrl ? { original_url: link.originalUrl } : {}),
        expires_at: link.expiresAt.toISOString(),
        expires_in: link.expiresIn,
        ...apis.sandboxField,
      } satisfies PreviewUrlDto);
    }),
    on(listFilePassages, async ({ file_id, offset, cursor, limit }, principal, req, res) => {
      const page = { offset: cursor ?? offset, limit };
      const passages = await apisFor(principal).files.passages(principal.user.id, file_id, page);
      setNextLink(listFilePassages, req, res, baseUrl(req), passages.next_cursor);
      res.json(passages);
    }),
    ...webhookRoutes(deps.webhooks, baseUrl),
  ]);

  return app;
}
