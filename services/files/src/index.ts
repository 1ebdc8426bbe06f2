export { toFileDto } from "./file-dto.ts";
export { startFilesModule, type FilesModule, type FilesModuleDeps } from "./files-module.ts";
export {
  cleanFileName,
  FilesService,
  MAX_NAME_LENGTH,
  sniffKind,
  type PreviewLink,
  type UploadInput,
} from "./files-service.ts";
export { PREVIEW_TTL_SECONDS, PreviewTokens } from "./preview-tokens.ts";
