import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat, access, constants } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { assertSafeKey, BlobNotFoundError, type BlobStore, type ByteRange } from "./blob-store.ts";

/**
 * Blobs as files under one directory. Writes go to a temporary file first and are renamed into
 * place, so a reader never sees half a blob and a failed upload leaves nothing behind.
 */
export class LocalBlobStore implements BlobStore {
  private readonly tmpDir: string;

  constructor(private readonly root: string) {
    this.tmpDir = join(root, ".tmp");
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }

  async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    const target = this.pathOf(key);
    await mkdir(this.tmpDir, { recursive: true });
    await mkdir(dirname(target), { recursive: true });
    const tmp = join(this.tmpDir, randomUUID());
    try {
      await pipeline(body, createWriteStream(tmp, { flags: "wx", mode: 0o600 }));
      const { size } = await stat(tmp);
      await rename(tmp, target);
      return { sizeBytes: size };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key);
    const found = await this.stat(key);
    if (!found) throw new BlobNotFoundError(key);
    return createReadStream(path, range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<{ sizeBytes: number } | null> {
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { sizeBytes: s.size } : null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.R_OK | constants.W_OK);
  }

  /** Removes temporary files a crash left behind. */
  async sweepTemporaryFiles(): Promise<void> {
    await rm(this.tmpDir, { recursive: true, force: true });
  }
}
