import { createHash, randomUUID } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { BlobNotFoundError, type BlobStore } from "../src/blob-store.ts";

export interface BlobStoreHarness {
  store: BlobStore;
  cleanup(): Promise<void>;
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** A stream of `total` pseudo-random bytes in 64 KiB chunks, never held in memory at once, and its sha256. */
export function generatedStream(total: number, seed = 1): { stream: Readable; digest: () => string } {
  const hash = createHash("sha256");
  let produced = 0;
  let state = seed >>> 0 || 1;
  const stream = new Readable({
    read() {
      if (produced >= total) {
        this.push(null);
        return;
      }
      const size = Math.min(64 * 1024, total - produced);
      const chunk = Buffer.allocUnsafe(size);
      for (let i = 0; i < size; i++) {
        // xorshift32: cheap, deterministic, not compressible into a pattern the store could fake.
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        chunk[i] = state & 0xff;
      }
      hash.update(chunk);
      produced += size;
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest("hex") };
}

/** A stream that sends some bytes and then fails, like a client that disconnects mid-upload. */
export function failingStream(error: Error, bytesBeforeFailure = 100_000): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytesBeforeFailure) {
        this.destroy(error);
        return;
      }
      const size = Math.min(16 * 1024, bytesBeforeFailure - sent);
      sent += size;
      this.push(Buffer.alloc(size, 0x61));
    },
  });
}

const UNSAFE_KEYS = [
  "../x",
  "/abs",
  "a/../b",
  "..",
  "a/..",
  "../../etc/passwd",
  "",
  "./a",
  "a/./b",
  "a\\..\\b",
];

/**
 * The behaviour every BlobStore adapter promises (see the JSDoc in src/blob-store.ts). Keys are
 * namespaced with a random prefix, so adapters over a shared bucket need no emptying between runs.
 */
export function blobStoreContract(name: string, make: () => Promise<BlobStoreHarness>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let harness: BlobStoreHarness;
    let store: BlobStore;
    let prefix: string;

    beforeEach(async () => {
      harness = await make();
      store = harness.store;
      prefix = `test-${randomUUID()}`;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    const key = (suffix: string) => `${prefix}/${suffix}`;
    const put = (k: string, content: string | Buffer) => store.put(k, Readable.from([Buffer.from(content)]));

    it("check() succeeds on a usable store", async () => {
      await expect(store.check()).resolves.toBeUndefined();
    });

    it("stores a stream and reads the same bytes back, reporting its size", async () => {
      const body = Buffer.from("Quarterly revenue grew by 12% in the third quarter.\n");
      expect(await put(key("report"), body)).toEqual({ sizeBytes: body.length });
      expect(await store.stat(key("report"))).toEqual({ sizeBytes: body.length });
      expect(await readAll(await store.get(key("report")))).toEqual(body);
    });

    it("accepts a stream of many chunks and keys nested like the file keys Locus makes", async () => {
      const k = key(`files/${randomUUID()}/${randomUUID()}.jsonl`);
      const parts = Array.from({ length: 50 }, (_, i) => Buffer.from(`{"n":${i}}\n`));
      const { sizeBytes } = await store.put(k, Readable.from(parts));
      const expected = Buffer.concat(parts);
      expect(sizeBytes).toBe(expected.length);
      expect(await readAll(await store.get(k))).toEqual(expected);
    });

    it("stores an empty blob", async () => {
      expect(await store.put(key("empty"), Readable.from([]))).toEqual({ sizeBytes: 0 });
      expect(await store.stat(key("empty"))).toEqual({ sizeBytes: 0 });
      expect((await readAll(await store.get(key("empty")))).length).toBe(0);
    });

    it("round-trips a multi-megabyte stream byte for byte", async () => {
      const size = 12 * 1024 * 1024 + 12_345;
      const source = generatedStream(size, 42);
      expect(await store.put(key("big"), source.stream)).toEqual({ sizeBytes: size });
      expect(await store.stat(key("big"))).toEqual({ sizeBytes: size });

      const hash = createHash("sha256");
      let read = 0;
      for await (const chunk of await store.get(key("big"))) {
        const bytes = chunk as Buffer;
        hash.update(bytes);
        read += bytes.length;
      }
      expect(read).toBe(size);
      expect(hash.digest("hex")).toBe(source.digest());
    });

    it("reads inclusive byte ranges", async () => {
      await put(key("digits"), "0123456789");
      const range = async (start: number, end: number) =>
        (await readAll(await store.get(key("digits"), { start, end }))).toString();
      expect(await range(2, 5)).toBe("2345");
      expect(await range(0, 0)).toBe("0");
      expect(await range(9, 9)).toBe("9");
      expect(await range(0, 9)).toBe("0123456789");
    });

    it("reads a range from the middle of a large blob", async () => {
      const size = 3 * 1024 * 1024;
      const source = generatedStream(size, 7);
      await store.put(key("large"), source.stream);
      const whole = await readAll(await store.get(key("large")));
      const start = 1_500_000;
      const end = 2_600_000;
      const part = await readAll(await store.get(key("large"), { start, end }));
      expect(part.length).toBe(end - start + 1);
      expect(part.equals(whole.subarray(start, end + 1))).toBe(true);
    });

    it("get of an absent blob throws BlobNotFoundError; stat returns null", async () => {
      await expect(store.get(key("missing"))).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.get(key("missing"), { start: 0, end: 1 })).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.stat(key("missing"))).toBeNull();
    });

    it("a blob key that is only a prefix of stored keys is absent", async () => {
      await put(key("dir/child"), "x");
      expect(await store.stat(key("dir"))).toBeNull();
      await expect(store.get(key("dir"))).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    it("put replaces what was stored under the key", async () => {
      await put(key("doc"), "a much longer first version of the document");
      expect(await put(key("doc"), "short")).toEqual({ sizeBytes: 5 });
      expect(await store.stat(key("doc"))).toEqual({ sizeBytes: 5 });
      expect((await readAll(await store.get(key("doc")))).toString()).toBe("short");
    });

    it("delete removes the blob, and deleting an absent blob is not an error", async () => {
      await put(key("gone"), "bytes");
      await put(key("kept"), "other bytes");
      await store.delete(key("gone"));
      expect(await store.stat(key("gone"))).toBeNull();
      await expect(store.get(key("gone"))).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.delete(key("gone"))).resolves.toBeUndefined();
      await expect(store.delete(key("never-existed"))).resolves.toBeUndefined();
      expect(await store.stat(key("kept"))).toEqual({ sizeBytes: 11 });
    });

    it("a failing source stream rejects with the stream's error and leaves nothing behind", async () => {
      const boom = new Error("client disconnected");
      await expect(store.put(key("broken"), failingStream(boom))).rejects.toThrow("client disconnected");
      expect(await store.stat(key("broken"))).toBeNull();
      await expect(store.get(key("broken"))).rejects.toBeInstanceOf(BlobNotFoundError);
      // The key is still usable afterwards.
      expect(await put(key("broken"), "retry")).toEqual({ sizeBytes: 5 });
    });

    it("a failing overwrite keeps the previous blob whole", async () => {
      await put(key("stable"), "version one");
      await expect(store.put(key("stable"), failingStream(new Error("network reset")))).rejects.toThrow(
        "network reset",
      );
      expect((await readAll(await store.get(key("stable")))).toString()).toBe("version one");
    });

    it("nothing is visible under the key until the whole stream is written", async () => {
      const body = new PassThrough();
      const pending = store.put(key("slow"), body);
      body.write(Buffer.alloc(256 * 1024, 0x62));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await store.stat(key("slow"))).toBeNull();
      await expect(store.get(key("slow"))).rejects.toBeInstanceOf(BlobNotFoundError);
      body.end(Buffer.alloc(1024, 0x63));
      expect(await pending).toEqual({ sizeBytes: 257 * 1024 });
      expect(await store.stat(key("slow"))).toEqual({ sizeBytes: 257 * 1024 });
    });

    describe("refuses keys that could name a place outside the store", () => {
      it.each(UNSAFE_KEYS)("refuses %j in put, get, stat and delete", async (unsafe) => {
        await expect(store.put(unsafe, Readable.from([Buffer.from("x")]))).rejects.toThrow();
        await expect(store.get(unsafe)).rejects.toThrow();
        await expect(store.stat(unsafe)).rejects.toThrow();
        await expect(store.delete(unsafe)).rejects.toThrow();
      });

      it("refuses a traversal key that points back into the store", async () => {
        await put(key("target"), "original");
        const sneaky = `${prefix}/x/../target`;
        await expect(store.put(sneaky, Readable.from([Buffer.from("replaced")]))).rejects.toThrow();
        await expect(store.delete(sneaky)).rejects.toThrow();
        expect((await readAll(await store.get(key("target")))).toString()).toBe("original");
      });
    });
  });
}
