import {
  cleanFileName,
  Errors,
  MAX_NAME_LENGTH,
  PREVIEW_TTL_SECONDS,
  type FilePassagesDto,
  type FileRecordDto,
  type SearchResponseDto,
} from "@locus/contracts";
import {
  sniffKind,
  type FileListOptions,
  type FileListPage,
  type FilesApi,
  type PreviewLink,
  type UploadInput,
} from "@locus/files";
import type { User } from "@locus/metadata-store";
import type { SearchApi, SearchRequest } from "@locus/search";
import type { Principal } from "./authenticate.ts";
import { sandboxFile, sandboxFilePasses, sandboxPassages, sandboxSearch, sandboxUpload } from "./sandbox.ts";

/** What answers a request: the live files and search services, or the sandbox for test keys. */
export interface GatewayApis {
  files: FilesApi;
  search: SearchApi;
  /**
   * Spread into the answers the gateway builds itself (a deletion, a preview link): `sandbox: true`
   * for test keys, nothing for live ones.
   */
  sandboxField: { sandbox?: true };
}

/** The APIs for each principal, chosen once per request: test keys get the sandbox, never live data. */
export function apisChooser(
  live: { files: FilesApi; search: SearchApi },
  maxUploadBytes: number,
): (principal: Principal) => GatewayApis {
  const liveApis: GatewayApis = {
    files: live.files,
    search: live.search,
    sandboxField: {},
  };
  const sandboxApis: GatewayApis = {
    files: new SandboxFilesApi(maxUploadBytes),
    search: new SandboxSearchApi(),
    sandboxField: { sandbox: true },
  };
  return (principal) => (principal.sandbox ? sandboxApis : liveApis);
}

/**
 * The files API of test keys: the mock answers of sandbox.ts, at once. An upload is read through
 * with the same checks as a live one (size, name, kind) and nothing is kept; nothing is read from
 * or written to stored data, whichever user asks.
 */
export class SandboxFilesApi implements FilesApi {
  constructor(private readonly maxUploadBytes: number) {}

  async upload(_user: User, input: UploadInput): Promise<FileRecordDto> {
    const name = cleanFileName(input.originalName);
    let head = Buffer.alloc(0);
    let size = 0;
    for await (const chunk of input.body) {
      const bytes = chunk as Buffer;
      if (head.length < 4100) head = Buffer.concat([head, bytes]).subarray(0, 4100);
      size += bytes.length;
      if (size > this.maxUploadBytes) {
        throw Errors.payloadTooLarge(this.maxUploadBytes);
      }
    }
    if (name.length === 0) throw Errors.fileUnnamed();
    if (name.length > MAX_NAME_LENGTH) throw Errors.fileNameTooLong(MAX_NAME_LENGTH);
    const { kind, mimeType } = await sniffKind(head, name);
    return sandboxUpload({
      originalName: name,
      fileType: kind,
      mimeType,
      sizeBytes: size,
      metadata: input.metadata,
    });
  }

  /** Nothing was stored, so there is nothing to process or to undo. */
  async announceUpload(): Promise<void> {}
  async discardUpload(): Promise<void> {}

  list(_userId: string, options: FileListOptions): Promise<FileListPage> {
    const files = sandboxFilePasses(options.filter) ? [sandboxFile()] : [];
    return Promise.resolve({ files: files.slice(0, options.limit), nextCursor: null });
  }

  get(_userId: string, fileId: string): Promise<FileRecordDto> {
    return Promise.resolve(sandboxFile({ id: fileId }));
  }

  async delete(): Promise<void> {}

  /** Every file previews as the example PDF, served at /previews/sandbox. */
  previewLink(_userId: string, _fileId: string, baseUrl: string): Promise<PreviewLink> {
    return Promise.resolve({
      url: `${baseUrl}/previews/sandbox`,
      expiresAt: new Date(Date.now() + PREVIEW_TTL_SECONDS * 1000),
      expiresIn: PREVIEW_TTL_SECONDS,
    });
  }

  passages(
    _userId: string,
    _fileId: string,
    page: { offset: number; limit: number },
  ): Promise<FilePassagesDto> {
    return Promise.resolve(sandboxPassages(page));
  }
}

/** The search API of test keys: two mock passages about the query, at once. */
export class SandboxSearchApi implements SearchApi {
  search(request: SearchRequest): Promise<SearchResponseDto> {
    return Promise.resolve(
      sandboxSearch({
        q: request.q,
        limit: request.limit,
        mode: request.mode,
        offset: request.offset ?? 0,
        filter: request.filter,
      }),
    );
  }
}
