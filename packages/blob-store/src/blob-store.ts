import type { Readable } from "node:stream";

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/**
 * Where file bytes and extractions live. Embedded: a local directory; split: S3. Bytes move as
 * streams both ways, so memory does not grow with file size.
 */
export interface BlobStore {
  /**
   * Stores the stream under key, replacing what was there. Nothing is visible under the key until
   * the whole stream has been written; if the stream fails, nothing is left behind and the
   * stream's error is rethrown.
   */
  put(key: string, body: Readable): Promise<{ sizeBytes: number }>;
  /** Reads the blob, or one byte range of it. Throws BlobNotFoundError when absent. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Size of the blob, or null when absent. */
  stat(key: string): Promise<{ sizeBytes: number } | null>;
  /** Removes the blob; removing an absent blob is not an error. */
  delete(key: string): Promise<void>;
  check(): Promise<void>;
  /**
   * A link from which the store itself serves the blob to a browser, for a limited time, inline
   * with the given type and name (S3: a presigned GET). Absent when the store cannot serve browsers
   * (a local directory): Locus serves the bytes then.
   */
  presignedGetUrl?(key: string, options: PresignedGetOptions): Promise<string>;
  /**
   * Removes what a crash left half-written. Only for the one process that owns the store's files,
   * at start, before anything writes. Absent when a failed write leaves nothing to sweep.
   */
  sweepTemporaryFiles?(): Promise<void>;
}

export interface PresignedGetOptions {
  /** Lifetime of the URL; S3 allows at most 7 days. */
  expiresInSeconds: number;
  /** Content-Type sent with the bytes, whatever was stored. */
  contentType?: string;
  /** Name shown by the browser; the disposition is always inline, for previews. */
  fileName?: string;
}

export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`Blob ${key} not found`);
    this.name = "BlobNotFoundError";
  }
}

/**
 * Keys are made by Locus, never from user input, but are still checked so that no key can name a
 * place outside the store.
 */
export function assertSafeKey(key: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/.test(key) || key.includes("..")) {
    throw new Error(`Unsafe blob key: ${JSON.stringify(key)}`);
  }
}
