import { CreateBucketCommand, HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { createHash, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { Readable } from "node:stream";
import { inlineContentDisposition } from "../src/content-disposition.ts";
import { S3BlobStore, type S3BlobStoreOptions } from "../src/s3-blob-store.ts";
import { blobStoreContract, failingStream, generatedStream, readAll } from "./blob-store.contract.ts";
import { startSigningS3Server, type SigningS3Server } from "@locus/testing";

const BUCKET = "locus-blobs";
const MiB = 1024 * 1024;

let server: SigningS3Server;
const stores: S3BlobStore[] = [];

function makeStore(overrides: Partial<S3BlobStoreOptions> = {}): S3BlobStore {
  const store = new S3BlobStore({
    bucket: BUCKET,
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    ...overrides,
  });
  stores.push(store);
  return store;
}

beforeAll(async () => {
  server = await startSigningS3Server();
  const admin = new S3Client({
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  admin.destroy();
});

afterAll(async () => {
  for (const store of stores) store.close();
  await server?.stop();
});

blobStoreContract("S3 on s3rver, with signature V4 verified by the test server", () =>
  Promise.resolve({ store: makeStore(), cleanup: () => Promise.resolve() }),
);

// The same contract against a real S3-compatible server when one is configured (optional).
const realS3 = {
  endpoint: process.env.S3_ENDPOINT,
  bucket: process.env.S3_BUCKET,
  region: process.env.S3_REGION ?? "us-east-1",
  accessKeyId: process.env.S3_ACCESS_KEY_ID,
  secretAccessKey: process.env.S3_SECRET_ACCESS_KEY,
  forcePathStyle: process.env.S3_FORCE_PATH_STYLE === "true",
};
if (realS3.endpoint && realS3.bucket) {
  const { endpoint, bucket } = realS3;
  blobStoreContract(`S3 at S3_ENDPOINT (${new URL(endpoint).host}), bucket ${bucket}`, () => {
    const store = new S3BlobStore({
      bucket,
      endpoint,
      region: realS3.region,
      forcePathStyle: realS3.forcePathStyle,
      keyPrefix: "locus-contract-tests",
      ...(realS3.accessKeyId && realS3.secretAccessKey
        ? { accessKeyId: realS3.accessKeyId, secretAccessKey: realS3.secretAccessKey }
        : {}),
    });
    return Promise.resolve({ store, cleanup: () => Promise.resolve(store.close()) });
  });
}

const key = (name: string) => `test-${randomUUID()}/${name}`;
const put = (store: S3BlobStore, k: string, content: string | Buffer) =>
  store.put(k, Readable.from([Buffer.from(content)]));

describe("S3BlobStore against a server that checks signatures", () => {
  it("the server refuses requests signed with a wrong secret key", async () => {
    const good = makeStore();
    const forged = makeStore({ secretAccessKey: `${server.secretAccessKey}x` });
    const k = key("signed");
    await put(good, k, "genuine");

    await expect(put(forged, k, "forged")).rejects.toMatchObject({ name: "SignatureDoesNotMatch" });
    await expect(forged.get(k)).rejects.toMatchObject({ name: "SignatureDoesNotMatch" });
    await expect(forged.stat(k)).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    await expect(forged.delete(k)).rejects.toMatchObject({ name: "SignatureDoesNotMatch" });
    await expect(forged.check()).rejects.toThrow(/refused access to bucket "locus-blobs" \(HTTP 403\)/);

    expect((await readAll(await good.get(k))).toString()).toBe("genuine");
  });

  it("the server refuses an unknown access key and unsigned requests", async () => {
    const stranger = makeStore({ accessKeyId: "AKIANOBODY", secretAccessKey: server.secretAccessKey });
    const k = key("private");
    await put(makeStore(), k, "private bytes");
    await expect(stranger.get(k)).rejects.toMatchObject({ name: "InvalidAccessKeyId" });

    const anonymous = await fetch(`${server.endpoint}/${BUCKET}/${k}`);
    expect(anonymous.status).toBe(403);
    expect(await anonymous.text()).toContain("<Code>AccessDenied</Code>");
  });

  it("check() never puts the secret in its error", async () => {
    const forged = makeStore({ secretAccessKey: "definitely-not-the-secret-1234" });
    const error = await forged.check().then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).not.toContain("definitely-not-the-secret-1234");
    expect(error?.message).not.toContain(server.secretAccessKey);
  });
});

describe("S3BlobStore on a bucket that does not exist", () => {
  const bucketExists = async (bucket: string) => {
    const admin = new S3Client({
      region: server.region,
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    try {
      await admin.send(new HeadBucketCommand({ Bucket: bucket }));
      return true;
    } catch {
      return false;
    } finally {
      admin.destroy();
    }
  };

  it("check() says, naming the bucket, to create it or to let Locus; and creates nothing", async () => {
    const bucket = `missing-${randomUUID().slice(0, 8)}`;
    await expect(makeStore({ bucket }).check()).rejects.toThrow(
      `S3 bucket "${bucket}" does not exist: create it, or set S3_CREATE_BUCKET=true for Locus to create it`,
    );
    expect(await bucketExists(bucket)).toBe(false);
  });

  it("with createBucket, check() creates it (once, whichever process comes first) and blobs go there", async () => {
    const bucket = `created-${randomUUID().slice(0, 8)}`;
    const [first, second] = [
      makeStore({ bucket, createBucket: true }),
      makeStore({ bucket, createBucket: true }),
    ];
    await Promise.all([first.check(), second.check()]);
    expect(await bucketExists(bucket)).toBe(true);
    await first.check();
    await put(first, "a/b", "in the new bucket");
    expect((await readAll(await second.get("a/b"))).toString()).toBe("in the new bucket");
  });
});

describe("S3BlobStore multipart uploads", () => {
  it("uploads a 12 MB stream in 5 MiB parts and reads it back byte for byte", async () => {
    const store = makeStore({ partSizeBytes: 5 * MiB, queueSize: 2 });
    const k = key("multipart.bin");
    const size = 12 * 1000 * 1000;
    const source = generatedStream(size, 2024);
    const before = server.requests.length;

    expect(await store.put(k, source.stream)).toEqual({ sizeBytes: size });

    const sent = server.requests.slice(before).filter((r) => r.includes(k));
    expect(sent.filter((r) => r.startsWith("POST") && r.endsWith("?uploads"))).toHaveLength(1);
    expect(sent.filter((r) => r.startsWith("PUT") && r.endsWith("?partNumber&uploadId"))).toHaveLength(3);
    expect(sent.filter((r) => r.startsWith("POST") && r.endsWith("?uploadId"))).toHaveLength(1);
    expect(await server.pendingMultipartUploads(BUCKET)).not.toContain(k);

    const hash = createHash("sha256");
    for await (const chunk of await store.get(k)) hash.update(chunk as Buffer);
    expect(hash.digest("hex")).toBe(source.digest());
    expect(await store.stat(k)).toEqual({ sizeBytes: size });
  });

  it("a source that fails after some parts were uploaded aborts the upload: no object, no parts left", async () => {
    const store = makeStore({ partSizeBytes: 5 * MiB, queueSize: 2 });
    const k = key("aborted.bin");
    const before = server.requests.length;

    await expect(store.put(k, failingStream(new Error("client went away"), 11 * MiB))).rejects.toThrow(
      "client went away",
    );

    const sent = server.requests.slice(before).filter((r) => r.includes(k));
    expect(sent.filter((r) => r.startsWith("PUT") && r.endsWith("?partNumber&uploadId"))).toHaveLength(2);
    expect(sent.filter((r) => r.startsWith("DELETE") && r.endsWith("?uploadId"))).toHaveLength(1);
    expect(sent.filter((r) => r.startsWith("POST") && r.endsWith("?uploadId"))).toHaveLength(0);
    expect(await server.pendingMultipartUploads(BUCKET)).not.toContain(k);
    expect(await store.stat(k)).toBeNull();
  });

  it("when the abort itself fails, the source's error is still the one thrown", async () => {
    const store = makeStore({ partSizeBytes: 5 * MiB, queueSize: 2 });
    const k = key("abort-refused.bin");
    server.failAborts = true;
    try {
      await expect(
        store.put(k, failingStream(new Error("connection reset by peer"), 11 * MiB)),
      ).rejects.toThrow("connection reset by peer");
    } finally {
      server.failAborts = false;
    }
    // The parts stay behind for the bucket's lifecycle rule, as they would on S3; no object appears.
    expect(await server.pendingMultipartUploads(BUCKET)).toContain(k);
    expect(await store.stat(k)).toBeNull();
  });

  it("a small blob is sent as one PutObject", async () => {
    const store = makeStore();
    const k = key("small.txt");
    const before = server.requests.length;
    await put(store, k, "one request");
    expect(server.requests.slice(before).filter((r) => r.includes(k))).toEqual([`PUT /${BUCKET}/${k}`]);
  });
});

describe("S3BlobStore presigned previews", () => {
  const pdf = Buffer.from("%PDF-1.4\n% a tiny stand-in for a real document\n");
  const fileName = 'Rapport d\'été "final" 2024.pdf';

  it("serves the bytes inline with the given type and name, for as long as asked", async () => {
    const store = makeStore();
    const k = key("preview.pdf");
    await put(store, k, pdf);
    const url = await store.presignedGetUrl(k, {
      expiresInSeconds: 3600,
      contentType: "application/pdf",
      fileName,
    });
    expect(new URL(url).searchParams.get("X-Amz-Expires")).toBe("3600");

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-disposition")).toBe(inlineContentDisposition(fileName));
    expect(res.headers.get("content-disposition")).toBe(
      `inline; filename="Rapport d'_t_ _final_ 2024.pdf"; filename*=UTF-8''Rapport%20d%27%C3%A9t%C3%A9%20%22final%22%202024.pdf`,
    );
    expect(Buffer.from(await res.arrayBuffer())).toEqual(pdf);
  });

  it("a tampered signature or a tampered signed parameter is refused", async () => {
    const store = makeStore();
    const k = key("tamper.pdf");
    await put(store, k, pdf);
    const url = new URL(
      await store.presignedGetUrl(k, { expiresInSeconds: 3600, contentType: "application/pdf", fileName }),
    );

    const badSignature = new URL(url);
    const signature = badSignature.searchParams.get("X-Amz-Signature") ?? "";
    badSignature.searchParams.set(
      "X-Amz-Signature",
      `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`,
    );
    const refused = await fetch(badSignature);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("<Code>SignatureDoesNotMatch</Code>");

    const otherType = new URL(url);
    otherType.searchParams.set("response-content-type", "text/html");
    expect((await fetch(otherType)).status).toBe(403);

    const otherKey = new URL(url);
    otherKey.pathname = otherKey.pathname.replace("tamper.pdf", "other.pdf");
    expect((await fetch(otherKey)).status).toBe(403);
  });

  it("an expired URL is refused (expiry enforced by s3rver itself)", async () => {
    const store = makeStore();
    const k = key("expiring.pdf");
    await put(store, k, pdf);
    const url = await store.presignedGetUrl(k, { expiresInSeconds: 1, contentType: "application/pdf" });
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/<Code>AccessDenied<\/Code>.*Request has expired/s);
  });

  it("refuses a lifetime S3 would not accept", async () => {
    const store = makeStore();
    await expect(store.presignedGetUrl("a/b", { expiresInSeconds: 0 })).rejects.toThrow(/expiresInSeconds/);
    await expect(store.presignedGetUrl("a/b", { expiresInSeconds: 8 * 24 * 3600 })).rejects.toThrow(
      /expiresInSeconds/,
    );
    await expect(store.presignedGetUrl("../b", { expiresInSeconds: 60 })).rejects.toThrow(/Unsafe blob key/);
  });
});

describe("S3BlobStore check()", () => {
  it("rejects clearly when the bucket does not exist", async () => {
    await expect(makeStore({ bucket: "no-such-bucket" }).check()).rejects.toThrow(
      'S3 bucket "no-such-bucket" does not exist',
    );
  });

  it("rejects quickly when nothing listens at the endpoint", async () => {
    const port = await closedPort();
    const store = makeStore({ endpoint: `http://127.0.0.1:${port}`, checkTimeoutMs: 3_000 });
    const started = Date.now();
    await expect(store.check()).rejects.toThrow(/^S3 endpoint (unreachable|did not answer)/);
    // Within its 3 s deadline, with room for a busy CI (the SDK alone would retry on).
    expect(Date.now() - started).toBeLessThan(3_000 + 10_000);
  });
});

describe("S3BlobStore keys and options", () => {
  it("keeps every blob under keyPrefix", async () => {
    const prefixed = makeStore({ keyPrefix: "tenant-a/" });
    const plain = makeStore();
    const k = key("doc");
    await put(prefixed, k, "prefixed");
    expect(await prefixed.stat(k)).toEqual({ sizeBytes: 8 });
    expect(await plain.stat(k)).toBeNull();
    expect((await readAll(await plain.get(`tenant-a/${k}`))).toString()).toBe("prefixed");
  });

  it("refuses an invalid byte range before asking S3", async () => {
    const store = makeStore();
    await expect(store.get("a/b", { start: 5, end: 2 })).rejects.toThrow(RangeError);
    await expect(store.get("a/b", { start: -1, end: 2 })).rejects.toThrow(RangeError);
  });

  it("refuses half a key pair, an unsafe prefix and parts smaller than S3 allows", () => {
    const base = { bucket: "b", region: "us-east-1" };
    expect(() => new S3BlobStore({ ...base, accessKeyId: "AKIA" })).toThrow(
      /both accessKeyId and secretAccessKey/,
    );
    expect(() => new S3BlobStore({ ...base, keyPrefix: "../up" })).toThrow(/Unsafe blob key/);
    expect(() => new S3BlobStore({ ...base, partSizeBytes: 1024 })).toThrow(/partSizeBytes/);
  });
});

/** A port on which nothing listens: bound once by us, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
