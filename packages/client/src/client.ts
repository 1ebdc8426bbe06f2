import createClient, { type Client } from "openapi-fetch";
import { LocusApiError, LocusFileFailedError, LocusTimeoutError, type FileRecord } from "./errors.ts";
import {
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_RETRY_DELAY_MS,
  retryAfterMs,
  sendWithRetry,
  type RetryPolicy,
} from "./retry.ts";
import type { components, operations, paths } from "./schema.ts";
import { multipartBody, uploadSource, type UploadInput } from "./upload.ts";

type Schemas = components["schemas"];
export type SearchResponse = Schemas["SearchResponse"];
export type SearchResult = Schemas["SearchResult"];
export type PreviewUrl = Schemas["PreviewUrl"];
export type Deleted = Schemas["Deleted"];
export type { FileRecord };

/**
 * A query parameter's value. Arrays repeat the parameter (`file_id: [a, b]` sends
 * `file_id=a&file_id=b`); an object is a group of dotted parameters (`metadata: { team: "x" }`
 * sends `metadata.team=x`); undefined and null are left out.
 */
export type QueryValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly (string | number | boolean)[]
  | Readonly<Record<string, string | number | boolean>>;

/**
 * Parameters beyond those the generated types know, sent as they are: filters and paging added
 * to the API after this client was generated (`file_id`, `metadata.team`, `offset`…) work
 * before it is generated again.
 */
export type ExtraQuery = Record<string, QueryValue>;

export type SearchOptions = Omit<NonNullable<operations["search"]["parameters"]["query"]>, "q"> & ExtraQuery;
export type ListFilesOptions = NonNullable<operations["listFiles"]["parameters"]["query"]> & ExtraQuery;

export interface FileListPage {
  files: FileRecord[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface UploadOptions {
  /** The file's name in Locus: by default the path's last part, a File's name, or "upload". */
  name?: string;
  /**
   * Kept with the file and returned on its record; search and the file list filter on it
   * (`metadata: { team: "search" }` as a search option).
   */
  metadata?: FileRecord["metadata"];
  /**
   * The file's bytes handed to the connection so far, of its size: called as each 64 KiB chunk
   * goes out. A retried upload (after a 429) starts again from 0.
   */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

export interface WaitOptions {
  /** How long to wait in all before throwing LocusTimeoutError (default 5 minutes). */
  timeoutMs?: number;
  /** Time between two reads of the record (default 1 s). */
  pollIntervalMs?: number;
}

export interface LocusClientOptions {
  /** Where Locus answers, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A live (`sk_live_…`) or test (`sk_test_…`) key. */
  apiKey: string;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries after a 429 before it is thrown (default 3). */
  maxRetries?: number;
  /** The longest Retry-After worth waiting for (default 60 s); a longer one is thrown at once. */
  maxRetryDelayMs?: number;
  /** Called before each wait for a 429's Retry-After. */
  onRetry?: RetryPolicy["onRetry"];
}

export interface LocusHelpers {
  /** Uploads a file, reporting progress as its bytes go out; resolves with its record (`pending`). */
  upload(file: UploadInput, options?: UploadOptions): Promise<FileRecord>;
  /**
   * Reads the file's record until it is `ready` and resolves with it; throws LocusFileFailedError
   * (with the file's `error`) when it failed, LocusTimeoutError when the time is up.
   */
  waitUntilReady(fileId: string, options?: WaitOptions): Promise<FileRecord>;
  /** Searches the key's ready files: `limit`, `mode`, and any filter or paging parameter. */
  search(q: string, options?: SearchOptions): Promise<SearchResponse>;
  getFile(fileId: string): Promise<FileRecord>;
  /** One page of files, newest first, and the cursor of the next. */
  listFiles(options?: ListFilesOptions): Promise<FileListPage>;
  deleteFile(fileId: string): Promise<Deleted>;
  /** A signed link that shows the file for an hour, without the key. */
  previewUrl(fileId: string): Promise<PreviewUrl>;
}

/** The generated client (`client.GET("/api/files/{file_id}", …)`) with Locus's helpers. */
export type LocusClient = Client<paths> & LocusHelpers;

/** Query parameters as URLSearchParams writes them (every name and value percent-encoded). */
export function serializeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  const add = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      params.append(name, String(value));
    } else if (Array.isArray(value)) {
      for (const item of value) add(name, item);
    } else if (typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) add(`${name}.${key}`, inner);
    }
  };
  for (const [name, value] of Object.entries(query)) add(name, value);
  return params.toString();
}

/** openapi-fetch's answer as the helpers return it: the data, or a LocusApiError. */
async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    throw new LocusApiError(response.status, error, retryAfterMs(response.headers.get("Retry-After")));
  }
  return data as T;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A client for Locus's public API. Every request it sends (the helpers' and the generated
 * methods') is sent again after a 429 once its Retry-After has passed, up to `maxRetries` times.
 */
export function createLocusClient(options: LocusClientOptions): LocusClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const policy: RetryPolicy = {
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  };
  const authorization = `Bearer ${options.apiKey}`;
  const api = createClient<paths>({
    baseUrl,
    headers: { Authorization: authorization },
    // Each attempt sends a copy, so that the original's body is still there for the next.
    fetch: (request) => sendWithRetry(() => send(request.clone()), policy),
    querySerializer: serializeQuery,
  });

  const getFile = (fileId: string): Promise<FileRecord> =>
    unwrap(api.GET("/api/files/{file_id}", { params: { path: { file_id: fileId } } }));

  const helpers: LocusHelpers = {
    async upload(file, uploadOptions = {}) {
      const source = await uploadSource(file, uploadOptions.name);
      const response = await sendWithRetry(() => {
        const { contentType, body } = multipartBody(source, uploadOptions.metadata, uploadOptions.onProgress);
        // Node's fetch (undici) streams a ReadableStream body as it is read; it needs half-duplex.
        const init: RequestInit & { duplex: "half" } = {
          method: "POST",
          headers: { Authorization: authorization, "Content-Type": contentType },
          body,
          duplex: "half",
        };
        return send(new Request(`${baseUrl}/api/files/upload`, init));
      }, policy);
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON (a proxy's error page): kept as text on the error.
      }
      if (!response.ok) {
        throw new LocusApiError(response.status, parsed, retryAfterMs(response.headers.get("Retry-After")));
      }
      return (parsed as Schemas["UploadedFile"]).file;
    },

    async waitUntilReady(fileId, { timeoutMs = 300_000, pollIntervalMs = 1000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const file = await getFile(fileId);
        if (file.status === "ready") return file;
        if (file.status === "failed") throw new LocusFileFailedError(file);
        const left = deadline - Date.now();
        if (left <= 0) throw new LocusTimeoutError(file, timeoutMs);
        await sleep(Math.min(pollIntervalMs, left));
      }
    },

    search(q, searchOptions = {}) {
      const query = { ...searchOptions, q };
      return unwrap(api.GET("/api/search", { params: { query } }));
    },

    getFile,

    async listFiles(listOptions = {}) {
      const { data, error, response } = await api.GET("/api/files", {
        params: { query: listOptions },
      });
      if (!response.ok || data === undefined) {
        throw new LocusApiError(response.status, error, retryAfterMs(response.headers.get("Retry-After")));
      }
      return { files: data, nextCursor: response.headers.get("X-Next-Cursor") };
    },

    deleteFile: (fileId) =>
      unwrap(api.DELETE("/api/files/{file_id}", { params: { path: { file_id: fileId } } })),

    previewUrl: (fileId) =>
      unwrap(api.GET("/api/files/{file_id}/preview-url", { params: { path: { file_id: fileId } } })),
  };
  return Object.assign(api, helpers);
}
