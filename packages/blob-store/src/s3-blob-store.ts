import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
  S3ServiceException,
  type BucketLocationConstraint,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { pipeline, Readable, Transform } from "node:stream";
import {
  assertSafeKey,
  BlobNotFoundError,
  type BlobStore,
  type ByteRange,
  type PresignedGetOptions,
} from "./blob-store.ts";
import { inlineContentDisposition } from "./content-disposition.ts";

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** For S3-compatible servers (MinIO, Ceph, ...); AWS S3 when absent. */
  endpoint?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Static credentials; the SDK's default provider chain (env, profile, IAM role) when absent. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Puts every blob under this prefix, so Locus can share a bucket. */
  keyPrefix?: string;
  /** Multipart part size; memory per upload is about (queueSize + 1) × partSizeBytes. */
  partSizeBytes?: number;
  /** Parts uploaded concurrently per put. */
  queueSize?: number;
  /** How long a TCP connection may take to open before the request fails. */
  connectionTimeoutMs?: number;
  /** Upper bound for check(), retries included, so readiness probes answer quickly. */
  checkTimeoutMs?: number;
  /**
   * Lets check() create the bucket when it does not exist (S3_CREATE_BUCKET): for a local or
   * throwaway store. Off by default: a production bucket is made by its operator, with its policy,
   * encryption and lifecycle rules, and credentials meant for objects cannot create one anyway.
   */
  createBucket?: boolean;
}

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
const DEFAULT_QUEUE_SIZE = 2;
const MIN_PART_SIZE = 5 * 1024 * 1024;
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * Blobs as objects in one S3 bucket. Uploads are multipart and streamed: S3 makes an object
 * visible only when its upload completes, so readers never see half a blob, and a failed upload is
 * aborted so that no parts are left behind to be billed.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly checkTimeoutMs: number;
  private readonly createBucket: boolean;
  private readonly region: string;

  constructor(options: S3BlobStoreOptions) {
    if (!options.bucket) throw new Error("S3BlobStore needs a bucket");
    if (!options.region) throw new Error("S3BlobStore needs a region");
    if (Boolean(options.accessKeyId) !== Boolean(options.secretAccessKey)) {
      // Half a key pair would silently fall back to the default chain and sign as someone else.
      throw new Error("S3BlobStore needs both accessKeyId and secretAccessKey, or neither");
    }
    this.partSize = options.partSizeBytes ?? DEFAULT_PART_SIZE;
    if (!Number.isInteger(this.partSize) || this.partSize < MIN_PART_SIZE) {
      throw new Error(
        `S3BlobStore partSizeBytes must be an integer of at least ${MIN_PART_SIZE} (S3's minimum)`,
      );
    }
    this.queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
    if (!Number.isInteger(this.queueSize) || this.queueSize < 1) {
      throw new Error("S3BlobStore queueSize must be a positive integer");
    }
    this.bucket = options.bucket;
    this.prefix = normalizePrefix(options.keyPrefix);
    this.checkTimeoutMs = options.checkTimeoutMs ?? 5_000;
    this.createBucket = options.createBucket ?? false;
    this.region = options.region;

    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? false,
      requestHandler: {
        // Fails fast when the endpoint does not answer at all. No socket idle timeout: a reader
        // may legitimately pause a download stream for a long time (backpressure).
        connectionTimeout: options.connectionTimeoutMs ?? 3_000,
        // Time until response headers: generous, as an UploadPart sends a whole part first.
        requestTimeout: 120_000,
        throwOnRequestTimeout: true,
      },
    };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.accessKeyId && options.secretAccessKey) {
      config.credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey };
    }
    this.client = new S3Client(config);
  }

  private objectKey(key: string): string {
    assertSafeKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    const objectKey = this.objectKey(key);
    let sizeBytes = 0;
    let sourceError: unknown;
    body.once("error", (err) => {
      sourceError ??= err;
    });
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sizeBytes += chunk.length;
        callback(null, chunk);
      },
    });
    // pipeline forwards the source's error to `counted`, which ends lib-storage's reading loop,
    // and destroys the source when we give up on `counted` first. Its own callback has nothing
    // to add: the source's error is taken from the source itself below.
    pipeline(body, counted, () => undefined);

    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: counted },
      partSize: this.partSize,
      queueSize: this.queueSize,
      // On failure lib-storage sends AbortMultipartUpload, so no parts stay behind.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      counted.destroy();
      // The port promises the stream's own error. lib-storage rethrows the abort's error instead
      // when the abort itself fails; a bucket lifecycle rule for incomplete uploads covers that.
      throw body.errored ?? sourceError ?? err;
    }
    return { sizeBytes };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const objectKey = this.objectKey(key);
    if (range) assertRange(range);
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      if (!(out.Body instanceof Readable)) throw new Error("S3 returned no readable body");
      return range ? exactRange(out.Body, range, out.ContentRange, out.ContentLength) : out.Body;
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(key);
      throw err;
    }
  }

  async stat(key: string): Promise<{ sizeBytes: number } | null> {
    const objectKey = this.objectKey(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return { sizeBytes: out.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    // S3 answers 204 for an absent key too, which is the port's contract.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey }));
  }

  /**
   * The bucket answers (HeadBucket). A missing one is created when createBucket allows it; else
   * the error says, in one sentence naming the bucket, to create it. Runs at start (the readiness
   * check's first round, logged when it fails) and at every readiness probe.
   */
  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), {
        abortSignal: AbortSignal.timeout(this.checkTimeoutMs),
      });
    } catch (err) {
      if (statusOf(err) === 404 && this.createBucket) return this.createMissingBucket();
      throw new Error(describeCheckFailure(this.bucket, err, this.checkTimeoutMs), { cause: err });
    }
  }

  private async createMissingBucket(): Promise<void> {
    try {
      await this.client.send(
        new CreateBucketCommand({
          Bucket: this.bucket,
          // AWS refuses us-east-1 as a location constraint: it is where a bucket goes without one.
          ...(this.region === "us-east-1"
            ? {}
            : { CreateBucketConfiguration: { LocationConstraint: this.region as BucketLocationConstraint } }),
        }),
        { abortSignal: AbortSignal.timeout(this.checkTimeoutMs) },
      );
    } catch (err) {
      // Another process of this deployment made it first (S3 and MinIO answer
      // BucketAlreadyOwnedByYou, some servers BucketAlreadyExists): usable if it now answers. A
      // bucket someone else owns does not (403), and stays an error.
      if (statusOf(err) === 409) {
        const usable = await this.client
          .send(new HeadBucketCommand({ Bucket: this.bucket }), {
            abortSignal: AbortSignal.timeout(this.checkTimeoutMs),
          })
          .then(
            () => true,
            () => false,
          );
        if (usable) return;
      }
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`S3 bucket "${this.bucket}" does not exist, and creating it failed: ${reason}`, {
        cause: err,
      });
    }
  }

  /**
   * A URL from which S3 itself serves the blob for a limited time, shown inline with the given
   * type and name, so previews do not pass through Locus.
   */
  async presignedGetUrl(key: string, options: PresignedGetOptions): Promise<string> {
    const objectKey = this.objectKey(key);
    const { expiresInSeconds } = options;
    if (
      !Number.isInteger(expiresInSeconds) ||
      expiresInSeconds < 1 ||
      expiresInSeconds > MAX_PRESIGN_SECONDS
    ) {
      throw new Error(`expiresInSeconds must be an integer from 1 to ${MAX_PRESIGN_SECONDS}`);
    }
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: objectKey,
      ResponseContentDisposition: inlineContentDisposition(options.fileName),
      // Never from a cache: a deleted file must not be shown again.
      ResponseCacheControl: "no-store",
      ...(options.contentType ? { ResponseContentType: options.contentType } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }

  /** Closes the client's idle connections. */
  close(): void {
    this.client.destroy();
  }
}

function normalizePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? "").replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return "";
  assertSafeKey(trimmed);
  return `${trimmed}/`;
}

function assertRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`Invalid byte range ${start}-${end}`);
  }
}

/**
 * The requested bytes out of what the server sent. HTTP lets a server answer a Range request with
 * the whole object (200) or, as s3rver does for `bytes=0-0`, with a wider range than asked; S3
 * itself sends exactly the range, and then the body passes through untouched.
 */
function exactRange(
  body: Readable,
  range: ByteRange,
  contentRange: string | undefined,
  contentLength: number | undefined,
): Readable {
  const served = parseContentRange(contentRange) ?? {
    start: 0,
    end: (contentLength ?? 0) - 1,
    total: contentLength ?? 0,
  };
  // Like S3, a range past the end is cut at the last byte.
  const end = Math.min(range.end, served.total - 1);
  if (served.start === range.start && served.end === end) return body;
  if (served.start > range.start || served.end < end) {
    body.destroy();
    throw new Error(`S3 sent bytes ${served.start}-${served.end} when asked for ${range.start}-${range.end}`);
  }
  return Readable.from(sliceBytes(body, range.start - served.start, end - range.start + 1));
}

async function* sliceBytes(source: Readable, skip: number, take: number): AsyncGenerator<Buffer> {
  let toSkip = skip;
  let toTake = take;
  for await (const data of source) {
    let chunk = data as Buffer;
    if (toSkip > 0) {
      const skipped = Math.min(toSkip, chunk.length);
      chunk = chunk.subarray(skipped);
      toSkip -= skipped;
    }
    if (chunk.length > 0 && toTake > 0) {
      const taken = chunk.subarray(0, toTake);
      toTake -= taken.length;
      yield taken;
    }
    // Leaving the loop destroys the source, so the rest of the object is not downloaded.
    if (toTake === 0) break;
  }
}

function parseContentRange(value: string | undefined): { start: number; end: number; total: number } | null {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value ?? "");
  if (!match) return null;
  const total = match[3] === "*" ? Infinity : Number(match[3]);
  return { start: Number(match[1]), end: Number(match[2]), total };
}

function statusOf(err: unknown): number | undefined {
  if (err instanceof S3ServiceException) return err.$metadata.httpStatusCode;
  return undefined;
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  // GET answers NoSuchKey; HEAD has no body to carry a code, so only its 404 tells.
  return err.name === "NoSuchKey" || err.name === "NotFound" || statusOf(err) === 404;
}

function describeCheckFailure(bucket: string, err: unknown, timeoutMs: number): string {
  const status = statusOf(err);
  if (status === 404)
    return `S3 bucket "${bucket}" does not exist: create it, or set S3_CREATE_BUCKET=true for Locus to create it`;
  if (status === 403 || status === 401) {
    return `S3 refused access to bucket "${bucket}" (HTTP ${status}): check the credentials and the bucket policy`;
  }
  if (status === 301 || status === 400) {
    return `S3 rejected the request for bucket "${bucket}" (HTTP ${status}): check the region and endpoint settings`;
  }
  if (status !== undefined) return `S3 bucket "${bucket}" check failed with HTTP ${status}`;
  const name = err instanceof Error ? err.name : "";
  if (name === "AbortError" || name === "TimeoutError") {
    return `S3 endpoint did not answer within ${timeoutMs} ms`;
  }
  const reason = err instanceof Error ? err.message : String(err);
  return `S3 endpoint unreachable: ${reason}`;
}
