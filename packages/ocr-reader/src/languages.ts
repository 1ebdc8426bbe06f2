import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";

const unzip = promisify(gunzip);

/**
 * The trained model tesseract.js reads with its LSTM engine. The `4.0.0_best_int` folder of each
 * `@tesseract.js-data/<code>` package holds it; the plain `4.0.0` folder adds the legacy engine's
 * data, which Locus never uses.
 */
const MODEL_FOLDER = "4.0.0_best_int";

/** Why OCR cannot start: a setting to fix before the process can read images. */
export class OcrSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OcrSetupError";
  }
}

const require = createRequire(import.meta.url);

/** The gzipped model of one language, from its npm package; never fetched from the network. */
export function languageModelPath(code: string): string {
  if (!/^[a-z]{3}(_[a-z]+)?$/.test(code)) {
    throw new OcrSetupError(`"${code}" is not a Tesseract language code (such as eng, deu or chi_sim).`);
  }
  let packageDir: string;
  try {
    packageDir = dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
  } catch {
    throw new OcrSetupError(
      `OCR language "${code}" is not installed: add the npm package @tesseract.js-data/${code} ` +
        `(pnpm add -w @tesseract.js-data/${code}) or remove "${code}" from LOCUS_OCR_LANGUAGES.`,
    );
  }
  const model = join(packageDir, MODEL_FOLDER, `${code}.traineddata.gz`);
  if (!existsSync(model)) {
    throw new OcrSetupError(
      `The package @tesseract.js-data/${code} has no ${MODEL_FOLDER}/${code}.traineddata.gz; reinstall it.`,
    );
  }
  return model;
}

/**
 * Which models the recognisers read with: `packaged`, the `@tesseract.js-data/<code>` npm packages
 * (best models, integer); `system`, the tesseract command's own (Debian's `tesseract-ocr-<code>`
 * packages hold the smaller "fast" models: on 60 real manual pages they read as many words right
 * in a quarter less time); `auto`, the command's own where it has the language, else the package's.
 */
export type OcrModelSource = "auto" | "system" | "packaged";

/** One language's model, as the recognisers are given it. */
export interface LanguageModel {
  code: string;
  /** The `.traineddata` file: gzipped when it comes from an npm package. */
  path: string;
  gzipped: boolean;
  origin: "system" | "packaged";
}

/** The folder a tesseract command reads its models from, and the languages it holds there. */
export interface InstalledLanguages {
  folder: string;
  codes: ReadonlySet<string>;
}

/**
 * The languages the tesseract `command` has models for (`tesseract --list-langs`, which also
 * follows TESSDATA_PREFIX), or null when it does not run or lists no folder.
 */
export function installedLanguages(command: string): InstalledLanguages | null {
  const said = spawnSync(command, ["--list-langs"], {
    encoding: "utf8",
    timeout: 10_000,
    env: process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (said.error || said.status !== 0) return null;
  // 'List of available languages in "/usr/share/tesseract-ocr/5/tessdata/" (3):', then a code a line.
  const output = `${said.stdout}\n${said.stderr}`;
  const header = /languages in "([^"]+)"/.exec(output);
  if (!header?.[1]) return null;
  const codes = new Set(
    said.stdout
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^[a-z]{3}(_[a-z]+)?$/.test(line)),
  );
  return { folder: resolve(header[1]), codes };
}

/**
 * The model of each language, from where `source` says. Throws OcrSetupError for a language
 * without one: missing from the npm packages, or (for `system`) from the tesseract installation.
 */
export function languageModels(
  codes: readonly string[],
  source: OcrModelSource,
  installed: InstalledLanguages | null,
): LanguageModel[] {
  if (codes.length === 0) throw new OcrSetupError("No OCR language is configured.");
  return codes.map((code): LanguageModel => {
    if (source !== "packaged" && installed?.codes.has(code)) {
      return { code, path: join(installed.folder, `${code}.traineddata`), gzipped: false, origin: "system" };
    }
    if (source === "system") {
      throw new OcrSetupError(
        installed
          ? `OCR language "${code}" is not installed for the tesseract command (in ${installed.folder}): ` +
              `install it (Debian: apt-get install tesseract-ocr-${code.replace(/_/g, "-")}), or set ` +
              "LOCUS_OCR_MODELS=auto to read it with the npm package's model."
          : "LOCUS_OCR_MODELS=system reads with the tesseract command's own models, and no tesseract " +
              "command lists any: install tesseract-ocr, or set LOCUS_OCR_MODELS=auto.",
      );
    }
    return { code, path: languageModelPath(code), gzipped: true, origin: "packaged" };
  });
}

/** Says where each model comes from, for the start-up log. */
export function describeModels(models: readonly LanguageModel[]): string {
  return models
    .map(({ code, path, origin }) =>
      origin === "system"
        ? `${code} from ${path}`
        : `${code} from @tesseract.js-data/${code} (${MODEL_FOLDER})`,
    )
    .join(", ");
}

/** A folder holding the models as one recogniser reads them, and how to give it back. */
export interface ModelFolder {
  path: string;
  /** Whether the models in it are gzipped (every one, or none). */
  gzipped: boolean;
  remove: () => Promise<void>;
}

/**
 * One folder holding every model, as a recogniser wants them: where they already lie together
 * (one package's folder, or the command's own), that folder; else a private one, the command's
 * models linked into it and the packages' unpacked (when `acceptsGzip` is false, or when they
 * are mixed with the command's, since a recogniser takes them all gzipped or none).
 */
export async function modelFolder(
  models: readonly LanguageModel[],
  acceptsGzip: boolean,
): Promise<ModelFolder> {
  const folders = new Set(models.map((model) => dirname(model.path)));
  const gzipped = models.every((model) => model.gzipped);
  const plain = models.every((model) => !model.gzipped);
  const [only] = folders;
  if (folders.size === 1 && only !== undefined && (plain || (gzipped && acceptsGzip))) {
    return { path: only, gzipped, remove: () => Promise.resolve() };
  }
  const folder = await mkdtemp(join(tmpdir(), "locus-tessdata-"));
  const remove = () => rm(folder, { recursive: true, force: true });
  try {
    for (const { code, path, gzipped: packed } of models) {
      const target = join(folder, `${code}.traineddata`);
      if (packed) await writeFile(target, await unzip(await readFile(path)));
      else await symlink(path, target);
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return { path: folder, gzipped: false, remove };
}
