import { createRequire } from "node:module";
import { createWorker, OEM, type Worker } from "tesseract.js";
import { languageFolder } from "./languages.ts";
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
  private readonly langFolder: { path: string; remove: () => void };

  /** `note`: why this engine was chosen, said in its description. */
  constructor(options: OcrEngineOptions & { note?: string }) {
    super(options);
    this.langFolder = languageFolder(this.languages);
    this.description =
      `tesseract.js ${TESSERACT_JS_VERSION} (WebAssembly)` + (options.note ? `: ${options.note}` : "");
  }

  protected async startWorker(): Promise<Worker> {
    const worker = await createWorker(this.languages, OEM.LSTM_ONLY, {
      langPath: this.langFolder.path,
      gzip: true,
      // The models are read from their packages each time; never written next to the process.
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

  protected release(): Promise<void> {
    this.langFolder.remove();
    return Promise.resolve();
  }
}
