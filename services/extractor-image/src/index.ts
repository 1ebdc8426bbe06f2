export { startExtractorImageModule, type ExtractorImageDeps } from "./extractor-image-module.ts";
