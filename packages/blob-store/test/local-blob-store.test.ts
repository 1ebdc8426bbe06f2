import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Readable } from "node:stream";
import { LocalBlobStore } from "../src/local-blob-store.ts";
import { blobStoreContract, failingStream, readAll } from "./blob-store.contract.ts";

blobStoreContract("local directory", async () => {
  const dir = await mkdtemp(join(tmpdir(), "locus-blobs-"));
  return {
    store: new LocalBlobStore(join(dir, "root")),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

/** Every regular file under dir, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe("LocalBlobStore on disk", () => {
  let outer: string;
  let root: string;
  let store: LocalBlobStore;

  beforeEach(async () => {
    // The store's root sits inside `outer`, so anything escaping the root would land in `outer`.
    outer = await mkdtemp(join(tmpdir(), "locus-blobs-outer-"));
    root = join(outer, "root");
    store = new LocalBlobStore(root);
    await store.check();
  });

  afterEach(async () => {
    await rm(outer, { recursive: true, force: true });
  });

  it("check() creates a missing root directory", async () => {
    const fresh = join(outer, "not", "yet", "there");
    await new LocalBlobStore(fresh).check();
    expect(await readdir(fresh)).toEqual([]);
  });

  it("stores each blob as one file under the root at the key's path", async () => {
    await store.put("files/u1/f1", Readable.from([Buffer.from("hello")]));
    expect(await readFile(join(root, "files", "u1", "f1"), "utf8")).toBe("hello");
  });

  it("writes nothing outside the root, whatever keys are tried", async () => {
    await mkdir(join(outer, "a"));
    const attempts = [
      "../escape",
      "../../escape",
      "/tmp/escape",
      "a/../../escape",
      "root/../../escape",
      "../root2/x",
    ];
    for (const key of attempts) {
      await expect(store.put(key, Readable.from([Buffer.from("pwned")]))).rejects.toThrow(/Unsafe blob key/);
    }
    await store.put("inside/ok", Readable.from([Buffer.from("fine")]));

    expect((await readdir(outer)).sort()).toEqual(["a", "root"]);
    expect(await readdir(join(outer, "a"))).toEqual([]);
    expect(await filesUnder(root)).toEqual(["inside/ok"]);
  });

  it("cannot delete or read a file outside the root", async () => {
    const secret = join(outer, "secret.txt");
    await writeFile(secret, "do not touch");
    await expect(store.delete("../secret.txt")).rejects.toThrow(/Unsafe blob key/);
    await expect(store.get("../secret.txt")).rejects.toThrow(/Unsafe blob key/);
    await expect(store.stat("../secret.txt")).rejects.toThrow(/Unsafe blob key/);
    expect(await readFile(secret, "utf8")).toBe("do not touch");
  });

  it("a failed upload leaves no file behind, not even a temporary one", async () => {
    await store.put("kept", Readable.from([Buffer.from("kept")]));
    await expect(store.put("files/u/broken", failingStream(new Error("aborted"), 300_000))).rejects.toThrow(
      "aborted",
    );
    expect(await filesUnder(root)).toEqual(["kept"]);
  });

  it("a successful upload leaves no temporary file behind", async () => {
    await store.put("a", Readable.from([Buffer.from("1")]));
    await store.put("a", Readable.from([Buffer.from("22")]));
    await store.put("b/c", Readable.from([Buffer.from("333")]));
    expect(await filesUnder(root)).toEqual(["a", "b/c"]);
  });

  it("sweepTemporaryFiles removes what a crash left in the temporary directory and nothing else", async () => {
    await store.put("blob", Readable.from([Buffer.from("data")]));
    await mkdir(join(root, ".tmp"), { recursive: true });
    await writeFile(join(root, ".tmp", "half-written"), "partial");
    await store.sweepTemporaryFiles();
    expect(await filesUnder(root)).toEqual(["blob"]);
    expect((await readAll(await store.get("blob"))).toString()).toBe("data");
    // Still usable after the sweep removed its temporary directory.
    await store.put("after", Readable.from([Buffer.from("x")]));
    expect(await store.stat("after")).toEqual({ sizeBytes: 1 });
  });

  it("a directory at a key's path is not a blob", async () => {
    await store.put("parent/child", Readable.from([Buffer.from("x")]));
    expect(await store.stat("parent")).toBeNull();
  });
});
