export { toFileDto } from "./file-dto.ts";
export type { FileListOptions, FileListPage, FilesApi, PreviewLink, UploadInput } from "./files-api.ts";
export { FilesHttpClient, filesInternalRouter } from "./files-http.ts";
export { startFilesModule, type FilesModule, type FilesModuleDeps } from "./files-module.ts";
export type { FilesObserver } from "./status-consumer.ts";
export { FilesService, processingRequest } from "./files-service.ts";
export { sniffKind } from "./sniff-kind.ts";
export {
  BlobStorePreviewLinks,
  previewLinksFor,
  SignedPreviewLinks,
  type PreviewLinks,
  type PreviewRequest,
} from "./preview-links.ts";
export { PREVIEW_TTL_SECONDS, PreviewTokens, type PreviewGrant } from "./preview-tokens.ts";
