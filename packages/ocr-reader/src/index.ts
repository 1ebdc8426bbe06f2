export { extractImage, isUnreadableImage, type ImageExtractionOptions } from "./extract-image.ts";
export {
  DEFAULT_IMAGE_LIMITS,
  ImageReadError,
  openImage,
  type GreyPixels,
  type ImageErrorCode,
  type ImageLimits,
  type OpenedImage,
  type PreparedPage,
} from "./image-reader.ts";
export {
  installedLanguages,
  languageModelPath,
  OcrSetupError,
  type InstalledLanguages,
  type OcrModelSource,
} from "./languages.ts";
export { createOcrEngine, type CreateOcrEngineOptions } from "./create-ocr-engine.ts";
export {
  findTesseract,
  NativeOcrEngine,
  TesseractUnavailableError,
  type NativeOcrEngineOptions,
  type TesseractBinary,
} from "./native-engine.ts";
export {
  OcrTimeoutError,
  type OcrEngine,
  type OcrEngineKind,
  type OcrEngineOptions,
  type OcrLine,
  type OcrObserver,
  type OcrPage,
  type PixelBox,
  type RecognizeOptions,
} from "./ocr-engine.ts";
export { WasmOcrEngine } from "./wasm-engine.ts";
export {
  buildOcrPassages,
  DEFAULT_OCR_PASSAGE_OPTIONS,
  keptLines,
  medianLineHeight,
  type KeptLine,
  toPageBox,
  type OcrPassageOptions,
  type PageGeometry,
} from "./ocr-passages.ts";
export { readPage, type ReadPageOptions } from "./read-page.ts";
// What a page's pixels say before it is read (the benchmark measures them against the recogniser).
export { estimateLean, estimateLineHeight } from "./lean.ts";
export { readPgm } from "./pgm.ts";
