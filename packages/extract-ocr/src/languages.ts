import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

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
 * One folder holding the models of every configured language, as tesseract.js wants them: a single
 * language is read where its package put it; several are linked side by side into a folder of
 * their own, since each package keeps its model in its own folder.
 */
export function languageFolder(codes: readonly string[]): { path: string; remove: () => void } {
  if (codes.length === 0) throw new OcrSetupError("No OCR language is configured.");
  const models = codes.map((code) => ({ code, path: languageModelPath(code) }));
  if (models.length === 1 && models[0]) return { path: dirname(models[0].path), remove: () => undefined };
  const folder = mkdtempSync(join(tmpdir(), "locus-ocr-languages-"));
  for (const { code, path } of models) symlinkSync(path, join(folder, `${code}.traineddata.gz`));
  return { path: folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}
