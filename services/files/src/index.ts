export { toFileDto } from "./file-dto.ts";
export type { FileListPage, FilesApi, PreviewLink, UploadInput } from "./files-api.ts";
export { FilesHttpClient, filesInternalRouter } from "./files-http.ts";
export { startFilesModule, type FilesModule, type FilesModuleDeps } from "./files-module.ts";
export {
  cleanFileName,
  FilesService,
  MAX_NAME_LENGTH,
  sniffKind,
  type PresignBlob,
} from "./files-service.ts";
export { PREVIEW_TTL_SECONDS, PreviewTokens, type PreviewGrant } from "./preview-tokens.ts";
