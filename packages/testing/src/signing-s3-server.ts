// s3rver ships no types: ./s3rver.d.ts declares what is used here (referenced for packages that import this file).
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./s3rver.d.ts" />
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import s3rverAccounts from "s3rver/lib/models/account.js";

/**
 * s3rver 3.7.1 behind a front that does what s3rver leaves out, so tests talk to a server that
 * refuses what AWS S3 refuses:
 *
 * - Signature V4 verification. s3rver verifies only V2 signatures; for V4 (the only scheme
 *   the AWS SDK v3 speaks) it checks that the access key exists and nothing else, and it lets
 *   unsigned requests through as anonymous. The front recomputes every V4 signature, header or
 *   presigned query, from the request as received, with the secret, and refuses a mismatch or an
 *   unsigned request with S3's own error codes. The code is written from AWS's specification and
 *   shares nothing with the SDK's signer, so a bug in one cannot hide in the other.
 * - AbortMultipartUpload, which s3rver answers with 405; the front removes the upload's parts
 *   from s3rver's directory as S3 would.
 *
 * s3rver still enforces what it does implement: presigned URL expiry (X-Amz-Date + X-Amz-Expires),
 * request time skew, and unknown access keys. Payload hashes (x-amz-content-sha256) are not
 * checked against the body, by either.
 */
export interface SigningS3Server {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Every request that passed verification, as `METHOD /path?param&names`, in order. */
  readonly requests: string[];
  /** Keys of the multipart uploads started and neither completed nor aborted. */
  pendingMultipartUploads(bucket: string): Promise<string[]>;
  /** When true, AbortMultipartUpload goes to s3rver, which answers 405 as it does on its own. */
  failAborts: boolean;
  stop(): Promise<void>;
}

export async function startSigningS3Server(region = "us-east-1"): Promise<SigningS3Server> {
  const directory = await mkdtemp(join(tmpdir(), "locus-s3rver-"));
  // A fresh random key pair per server: a test that passes cannot be relying on a default.
  const accessKeyId = `LOCUS${randomBytes(8).toString("hex").toUpperCase()}`;
  const secretAccessKey = randomBytes(30).toString("base64url");
  s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

  const s3rver = new S3rver({
    directory,
    silent: true,
    allowMismatchedSignatures: false,
    vhostBuckets: false,
  });
  const delegate = s3rver.callback();
  const uploadsDir = (bucket: string) => join(directory, bucket, "._S3rver_uploads");
  const secrets = new Map([[accessKeyId, secretAccessKey]]);
  const requests: string[] = [];

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, "InternalError", String(err));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = verifySignatureV4(req, region, secrets);
    if (refusal) {
      req.resume();
      sendError(res, refusal.status, refusal.code, refusal.message);
      return;
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    // x-id only names the SDK operation; X-Amz-* carry a presigned signature.
    const names = [...new Set(url.searchParams.keys())]
      .filter((k) => k !== "x-id" && !k.startsWith("X-Amz-"))
      .sort();
    requests.push(`${req.method ?? ""} ${url.pathname}${names.length ? `?${names.join("&")}` : ""}`);
    const uploadId = url.searchParams.get("uploadId");
    if (req.method === "DELETE" && uploadId !== null && !front.failAborts) {
      await abortMultipartUpload(res, url, uploadId);
      return;
    }
    await oneAtATime(url.pathname, res, () => delegate(req, res));
  }

  /**
   * One request at a time per object path, as S3 orders them: s3rver's files are not atomic, and
   * a DELETE racing a GET or PUT of the same object made s3rver throw ENOENT outside any request,
   * failing the test process (seen when files are deleted while their extraction is written).
   * The next request waits for the response to close and for s3rver to be done with the request:
   * a client that goes away early (a reader that stops reading) closes the response while s3rver
   * may still be opening the object's files (seen once more in a fresh-clone CI run).
   */
  const objectQueues = new Map<string, Promise<void>>();
  async function oneAtATime(path: string, res: ServerResponse, work: () => unknown): Promise<void> {
    const before = objectQueues.get(path) ?? Promise.resolve();
    const closed = new Promise<void>((resolve) => res.once("close", resolve));
    // Wrapped, so that the request's own promise is waited for, never adopted (nor its failure).
    let started: (handling: { done: Promise<unknown> }) => void = () => undefined;
    const handling = new Promise<{ done: Promise<unknown> }>((resolve) => (started = resolve));
    const tail = before
      .then(() => handling)
      .then(({ done }) => Promise.all([closed, done.catch(() => undefined)]))
      .then(() => undefined);
    objectQueues.set(path, tail);
    void tail.then(() => {
      if (objectQueues.get(path) === tail) objectQueues.delete(path);
    });
    await before;
    try {
      started({ done: Promise.resolve(work()) });
    } catch (err) {
      started({ done: Promise.resolve() });
      throw err;
    }
  }

  async function abortMultipartUpload(res: ServerResponse, url: URL, uploadId: string): Promise<void> {
    const [, bucket = "", ...keyParts] = url.pathname.split("/");
    const key = decodeURIComponent(keyParts.join("/"));
    if (!/^[0-9a-f]+$/.test(uploadId)) {
      sendError(res, 404, "NoSuchUpload", "The specified upload does not exist.");
      return;
    }
    const dir = join(uploadsDir(bucket), uploadId);
    const storedKey = await readFile(join(dir, "key"), "utf8").catch(() => null);
    if (storedKey !== key) {
      sendError(res, 404, "NoSuchUpload", "The specified upload does not exist.");
      return;
    }
    await rm(dir, { recursive: true, force: true });
    res.writeHead(204).end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const front: SigningS3Server = {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    accessKeyId,
    secretAccessKey,
    requests,
    failAborts: false,
    async pendingMultipartUploads(bucket) {
      let ids: string[];
      try {
        ids = await readdir(uploadsDir(bucket));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw err;
      }
      return Promise.all(ids.map((id) => readFile(join(uploadsDir(bucket), id, "key"), "utf8")));
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      s3rver.logger.close();
      s3rverAccounts.DUMMY_ACCOUNT.revokeAccessKey(accessKeyId);
      await rm(directory, { recursive: true, force: true });
    },
  };
  return front;
}

interface Refusal {
  status: number;
  code: string;
  message: string;
}

const ALGORITHM = "AWS4-HMAC-SHA256";

/** Null when the request carries a valid V4 signature, else the error S3 would answer. */
export function verifySignatureV4(
  req: IncomingMessage,
  region: string,
  secrets: ReadonlyMap<string, string>,
): Refusal | null {
  const rawUrl = req.url ?? "/";
  const queryStart = rawUrl.indexOf("?");
  const rawPath = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
  const params = parseQuery(queryStart === -1 ? "" : rawUrl.slice(queryStart + 1));
  const param = (name: string) => params.find(([k]) => k === name)?.[1];
  const authorization = req.headers.authorization;

  let credential: string;
  let signedHeaders: string;
  let provided: string;
  let amzDate: string;
  let payloadHash: string;
  let canonicalParams: [string, string][];

  if (authorization !== undefined) {
    const match =
      /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    if (!match) return malformed("The authorization header is malformed.");
    [, credential = "", signedHeaders = "", provided = ""] = match;
    amzDate = headerValue(req, "x-amz-date") ?? "";
    payloadHash = headerValue(req, "x-amz-content-sha256") ?? "";
    if (payloadHash === "") {
      return {
        status: 400,
        code: "InvalidRequest",
        message: "Missing required header: x-amz-content-sha256",
      };
    }
    canonicalParams = params;
  } else if (param("X-Amz-Algorithm") !== undefined) {
    if (param("X-Amz-Algorithm") !== ALGORITHM)
      return malformed("X-Amz-Algorithm only supports AWS4-HMAC-SHA256");
    credential = param("X-Amz-Credential") ?? "";
    signedHeaders = param("X-Amz-SignedHeaders") ?? "";
    provided = param("X-Amz-Signature") ?? "";
    amzDate = param("X-Amz-Date") ?? "";
    payloadHash = param("X-Amz-Content-Sha256") ?? "UNSIGNED-PAYLOAD";
    canonicalParams = params.filter(([k]) => k !== "X-Amz-Signature");
  } else {
    // A private bucket, as Locus's is: anonymous requests are refused.
    return { status: 403, code: "AccessDenied", message: "Access Denied" };
  }

  const [accessKeyId = "", scopeDate, scopeRegion, service, terminator, ...rest] = credential.split("/");
  if (
    rest.length > 0 ||
    service !== "s3" ||
    terminator !== "aws4_request" ||
    !/^\d{8}T\d{6}Z$/.test(amzDate)
  ) {
    return malformed("The credential scope or date is malformed.");
  }
  if (scopeDate !== amzDate.slice(0, 8)) return malformed("The credential date does not match X-Amz-Date.");
  if (scopeRegion !== region) return malformed(`The region '${scopeRegion}' is wrong; expecting '${region}'`);
  const secret = secrets.get(accessKeyId);
  if (secret === undefined) {
    return {
      status: 403,
      code: "InvalidAccessKeyId",
      message: "The AWS Access Key Id you provided does not exist in our records.",
    };
  }
  const headerNames = signedHeaders.split(";");
  if (!headerNames.includes("host")) return malformed("The host header must be signed.");
  if (authorization !== undefined && !headerNames.includes("x-amz-date")) {
    return malformed("The x-amz-date header must be signed.");
  }

  const canonicalHeaders = headerNames.map((name) => `${name}:${headerValue(req, name) ?? ""}\n`).join("");
  const canonicalQuery = canonicalParams
    .map(([k, v]) => [encodeRfc3986(k), encodeRfc3986(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  // S3 signs the path as sent, without the normalisation or double encoding other services use.
  const canonicalRequest = [
    req.method ?? "",
    rawPath,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join("\n");
  const scope = `${scopeDate}/${scopeRegion}/s3/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  let key = hmac(`AWS4${secret}`, scopeDate);
  for (const part of [scopeRegion, "s3", "aws4_request"]) key = hmac(key, part);
  const expected = Buffer.from(hmac(key, stringToSign).toString("hex"));
  const actual = Buffer.from(provided);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    return {
      status: 403,
      code: "SignatureDoesNotMatch",
      message: "The request signature we calculated does not match the signature you provided.",
    };
  }
  return null;
}

function malformed(message: string): Refusal {
  return { status: 400, code: "AuthorizationHeaderMalformed", message };
}

/** A header's value as signed: repeated headers joined by commas, spaces trimmed and collapsed. */
function headerValue(req: IncomingMessage, name: string): string | undefined {
  const values: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === name) values.push(req.rawHeaders[i + 1] ?? "");
  }
  if (values.length === 0) return undefined;
  return values.map((v) => v.trim().replace(/\s+/g, " ")).join(",");
}

function parseQuery(query: string): [string, string][] {
  if (query === "") return [];
  return query.split("&").map((pair) => {
    const eq = pair.indexOf("=");
    const k = eq === -1 ? pair : pair.slice(0, eq);
    const v = eq === -1 ? "" : pair.slice(eq + 1);
    return [decodeURIComponent(k), decodeURIComponent(v)];
  });
}

function encodeRfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

function hmac(key: string | Buffer, value: string): Buffer {
  return createHmac("sha256", key).update(value, "utf8").digest();
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`;
  res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
