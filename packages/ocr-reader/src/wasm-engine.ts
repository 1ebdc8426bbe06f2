import { createRequire } from "node:module";
import { createWorker, OEM, type Worker } from "tesseract.js";
import {
  describeModels,
  languageModels,
  modelFolder,
  type InstalledLanguages,
  type LanguageModel,
  type ModelFolder,
} from "./languages.ts";
import { PooledOcrEngine, type CornerBox, type OcrEngineOptions, type RecognisedLine } from "./ocr-engine.ts";

/** The shape of tesseract.js's `blocks` output that Locus reads. */
interface TessLine {
  text: string;
  confidence: number;
  bbox: CornerBox;
  baseline: CornerBox;
}
interface TessBlock {
  paragraphs: { lines: TessLine[] }[];
}

const TESSERACT_JS_VERSION = (
  createRequire(import.meta.url)("tesseract.js/package.json") as { version: string }
).version;

/**
 * Tesseract compiled to WebAssembly (tesseract.js): each recogniser is a worker thread with its own
 * copy of the model. Needs nothing but npm packages. The language models are found when the engine
 * is made, so a missing package stops the process at start-up rather than failing files later.
 */
export class WasmOcrEngine extends PooledOcrEngine<Worker> {
  readonly kind = "wasm";
  readonly description: string;
  private readonly models: LanguageModel[];
  private folder: Promise<ModelFolder> | undefined;

  /**
   * `note`: why this engine was chosen, said in its description; `installed`: the tesseract
   * command's own models, where one is installed (see OcrModelSource).
   */
  constructor(options: OcrEngineOptions & { note?: string; installed?: InstalledLanguages | null }) {
    super(options);
    const source = options.models ?? "auto";
    this.models = languageModels(
      this.languages,
      source,
      source === "packaged" ? null : (options.installed ?? null),
    );
    this.description =
      `tesseract.js ${TESSERACT_JS_VERSION} (WebAssembly; models: ${describeModels(this.models)})` +
      (options.note ? `: ${options.note}` : "");
  }

  protected async startWorker(): Promise<Worker> {
    this.folder ??= modelFolder(this.models, true);
    this.folder.catch(() => {
      // Tried again with the next recogniser.
      this.folder = undefined;
    });
    const folder = await this.folder;
    const worker = await createWorker(this.languages, OEM.LSTM_ONLY, {
      langPath: folder.path,
      gzip: folder.gzipped,
      // The models are read from where they lie each time; never written next to the process.
      cacheMethod: "none",
      // Without a handler, tesseract.js throws every failed job (an unreadable image) from an event
      // handler, where nothing can catch it; the job's promise says it anyway.
      errorHandler: () => undefined,
    });
    // The pages handed over carry no resolution Tesseract trusts; without one it guesses, and says
    // so on stderr for every image.
    await worker.setParameters({ user_defined_dpi: "300" });
    return worker;
  }

  protected async endWorker(worker: Worker): Promise<void> {
    await worker.terminate();
  }

  // Threads of this process: no processor time of their own to limit, nor a child for the CPU slots.
  protected async read(worker: Worker, image: Buffer, rotation: number): Promise<RecognisedLine[]> {
    let result;
    try {
      result = await worker.recognize(image, rotation === 0 ? {} : { rotateRadians: rotation }, {
        blocks: true,
        text: false,
      });
    } catch (err) {
      // tesseract.js rejects with its message as a string ("Error: Error attempting to read image.").
      throw err instanceof Error ? err : new Error(`tesseract.js: ${String(err).replace(/^Error: /, "")}`);
    }
    const blocks = (result.data.blocks ?? []) as TessBlock[];
    return blocks.flatMap((block) => block.paragraphs.flatMap((paragraph) => paragraph.lines));
  }

  protected async release(): Promise<void> {
    const folder = this.folder;
    this.folder = undefined;
    await (await folder?.catch(() => undefined))?.remove();
  }
}
