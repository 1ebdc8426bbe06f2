import { installedLanguages } from "./languages.ts";
import { findTesseract, NativeOcrEngine, TesseractUnavailableError } from "./native-engine.ts";
import type { OcrEngine, OcrEngineKind, OcrEngineOptions } from "./ocr-engine.ts";
import { WasmOcrEngine } from "./wasm-engine.ts";

export interface CreateOcrEngineOptions extends OcrEngineOptions {
  /**
   * `native`: the tesseract command, or a setup error when it is missing or older than Tesseract 4;
   * `wasm`: tesseract.js; `auto` (the default): native when the command works, else wasm.
   */
  engine?: OcrEngineKind | "auto";
  /** The tesseract command: a path, or a name looked up on PATH (default `tesseract`). */
  tesseractPath?: string;
}

/**
 * The configured OCR engine. Throws OcrSetupError (a setting to fix) for a missing language model,
 * and for `native` without a working tesseract command. Its description says which one it is.
 */
export function createOcrEngine(options: CreateOcrEngineOptions): OcrEngine {
  const { engine = "auto", tesseractPath, ...pool } = options;
  // tesseract.js reads the command's own models too where one is installed: the same lines either way.
  const installed = () =>
    pool.models === "packaged" ? null : installedLanguages(tesseractPath ?? "tesseract");
  if (engine === "wasm") return new WasmOcrEngine({ ...pool, installed: installed() });
  if (engine === "native") return new NativeOcrEngine({ ...pool, tesseract: findTesseract(tesseractPath) });
  let tesseract;
  try {
    tesseract = findTesseract(tesseractPath);
  } catch (err) {
    if (!(err instanceof TesseractUnavailableError)) throw err;
    return new WasmOcrEngine({
      ...pool,
      installed: installed(),
      note: `no native Tesseract to use: ${err.reason}`,
    });
  }
  return new NativeOcrEngine({ ...pool, tesseract });
}
