/** Search and the files: their operations, each declared once (see operation.ts). */
import {
  apiJsonSchemas,
  apiSchemaRef,
  FileType,
  MAX_NAME_LENGTH,
  METADATA_LIMITS,
  PASSAGE_PAGE_LIMITS,
  SEARCH_LIMITS,
  SearchMode,
  type FileFilter,
} from "@locus/contracts";
import { SANDBOX_FILE_ID } from "../sandbox.ts";
import { errorResponse, nextLink, ok, operation, rateLimitHeaders, type Group } from "./operation.ts";
import {
  cursor,
  enumList,
  instant,
  integer,
  literal,
  positionCursor,
  prefixed,
  text,
  uuid,
  uuidList,
} from "./rules.ts";

/** The prefix of a metadata condition's query parameter: `metadata.team=search`. */
export const METADATA_PARAM_PREFIX = "metadata.";

/** The filters of search and the file list: all hold at once. */
const fileFilter: Group<FileFilter | undefined> = {
  rules: {
    file_id: uuidList({
      description: `Only these files; repeat for several (at most ${SEARCH_LIMITS.fileIdsMax}).`,
      max: SEARCH_LIMITS.fileIdsMax,
    }),
    file_type: enumList(FileType.options, {
      description: "Only files of these kinds; repeat for several.",
      items: { $ref: apiSchemaRef("FileType") },
    }),
    created_after: instant({
      description:
        "Only files uploaded strictly after this instant (ISO 8601; a date is its midnight UTC, no offset means UTC).",
    }),
    created_before: instant({
      description: "Only files uploaded strictly before this instant (as `created_after`).",
    }),
    metadata: prefixed({
      prefix: METADATA_PARAM_PREFIX,
      keyPattern: METADATA_LIMITS.keyPattern,
      max: SEARCH_LIMITS.metadataFiltersMax,
      maxLength: METADATA_LIMITS.maxStringLength,
    }),
  },
  build(v) {
    const filter: FileFilter = {
      ...(v.file_id ? { fileIds: v.file_id as string[] } : {}),
      ...(v.file_type ? { fileTypes: [...new Set(v.file_type as FileType[])] } : {}),
      ...(v.created_after ? { createdAfter: v.created_after as string } : {}),
      ...(v.created_before ? { createdBefore: v.created_before as string } : {}),
      ...(v.metadata ? { metadata: v.metadata as Record<string, string> } : {}),
    };
    return Object.keys(filter).length > 0 ? filter : undefined;
  },
};

const FILTERS_TEXT =
  "Filters (`file_id`, `file_type`, `created_after`, `created_before`, and any number up to " +
  `${SEARCH_LIMITS.metadataFiltersMax} of \`metadata.<key>=<value>\`: the file's metadata has that value under ` +
  "that key, a number or boolean as JSON writes it, a list matching any of its items) all hold at once.";

export const search = operation({
  method: "get",
  path: "/api/search",
  operationId: "search",
  summary: "Search the caller's indexed passages",
  description:
    "Searches the caller's `ready` files.\n\n" +
    "**quick** ranks passages with BM25 (keywords, stemmed). `score` is s/(1+s) of the BM25 score s, so it " +
    "lies in [0, 1) and compares across queries of similar length.\n\n" +
    "**ai** is hybrid: BM25 and the question's vector against every passage's vector (semantic: it finds " +
    "passages that answer in other words), fused by reciprocal rank; `score` is the fused score over its best " +
    "possible value (1 = first by both measures). It adds `summary`, a few sentences answering the question " +
    "from the best results with markers [1], [2]… (each a `citations` entry pointing at a returned result, " +
    "with the quoted words and their locator); `answered: false` when the documents do not answer (the " +
    "summary then says so and cites nothing); `summary_source` and `vector_source` (`local` for the offline " +
    "engines, or the model's name); and `fallbacks` when a configured remote engine failed and the local one " +
    "answered instead.\n\n" +
    `${FILTERS_TEXT} They are applied inside the index, before results are ranked and cut to \`limit\`.\n\n` +
    "**Paging:** `next_offset` in the response is the `offset` of the next page of the same ranking (send the " +
    "same `q`, `mode`, filters and `limit`); null on the last page. `next_cursor`, given as `cursor`, and the " +
    "`Link` header say the same, by the paging rule of every list. In ai mode only the first page has the summary.",
  query: {
    q: text({
      required: true,
      description: "Words to find. Any text is safe: operators and quotes are treated as plain words.",
      min: SEARCH_LIMITS.qMinLength,
      max: SEARCH_LIMITS.qMaxLength,
    }),
    limit: integer({
      ge: SEARCH_LIMITS.limitMin,
      le: SEARCH_LIMITS.limitMax,
      default: SEARCH_LIMITS.limitDefault,
    }),
    mode: literal<SearchMode>(SearchMode.options, { schema: apiJsonSchemas().SearchMode, default: "quick" }),
    offset: integer({
      description: "Results to skip: the previous page's `next_offset`.",
      ge: 0,
      le: SEARCH_LIMITS.offsetMax,
      default: 0,
    }),
    cursor: positionCursor({ le: SEARCH_LIMITS.offsetMax }),
  },
  filter: fileFilter,
  responses: {
    "200": ok("Matching passages, best first.", "SearchResponse", { ...rateLimitHeaders, ...nextLink }),
  },
});

export const uploadFile = operation({
  method: "post",
  path: "/api/files/upload",
  operationId: "uploadFile",
  summary: "Upload a file and start processing it",
  description:
    "The kind is recognised from the file's bytes, not its name. Accepted today: PDF, and images " +
    "in PNG, JPEG, WebP, TIFF (every page), GIF (first frame) or BMP, and audio in MP3, WAV, " +
    "M4A/AAC, OGG/Opus or FLAC, and video in MP4, MOV, MKV or WebM, and documents (`file_type` " +
    "`document`): DOCX, DOC, ODT, RTF, PPTX, PPT, ODP, XLSX, XLS and ODS (converted to PDF, whose " +
    "pages and lines their locators count in), and text: HTML (by its markup), Markdown (named " +
    "`.md`) and plain text, whose lines count from the top of the document. A live upload " +
    "counts against the plan's monthly quota and answers at once with status `pending`; poll " +
    "GET /api/files/{file_id} until `ready` or `failed`. Control characters are removed from the name.",
  // Checked as it streams in (app.ts, upload-metadata.ts).
  requestBody: {
    required: true,
    content: {
      "multipart/form-data": {
        schema: {
          type: "object",
          required: ["file"],
          properties: {
            metadata: {
              type: "string",
              contentMediaType: "application/json",
              description:
                "Optional: a JSON object describing the file, kept on its record and filtered on with " +
                `\`metadata.<key>=<value>\`. At most ${METADATA_LIMITS.maxBytes} bytes and ` +
                `${METADATA_LIMITS.maxKeys} keys (letters, digits, \`_\` and \`-\`, not starting with a digit ` +
                `or \`-\`); values are strings (at most ${METADATA_LIMITS.maxStringLength} characters), ` +
                `numbers, booleans or lists of at most ${METADATA_LIMITS.maxListItems} strings. Send it ` +
                "before the `file` part: the file is stored as it streams in.",
            },
            file: {
              type: "string",
              format: "binary",
              description: `File name at most ${MAX_NAME_LENGTH} characters.`,
            },
          },
        },
      },
    },
  },
  responses: {
    "200": ok("The new file record.", "UploadedFile"),
    "400": errorResponse("Empty file, bad name, or a multipart body that cannot be parsed."),
    "413": errorResponse("The file is larger than the server's upload limit (LOCUS_MAX_UPLOAD_BYTES)."),
    "415": errorResponse("The file's content is not a kind Locus accepts."),
  },
});

export const listFiles = operation({
  method: "get",
  path: "/api/files",
  operationId: "listFiles",
  summary: "List the caller's files, newest first",
  description:
    'A bare JSON array. When more files remain, the response has a `Link: <...>; rel="next"` header ' +
    "(the next page's request, whole) and `X-Next-Cursor`: pass that cursor back as `cursor` (with the same " +
    "filters and `limit`) for the next page.\n\n" +
    FILTERS_TEXT,
  query: {
    limit: integer({ ge: 1, le: 1000, default: 1000 }),
    cursor: cursor(),
  },
  filter: fileFilter,
  responses: {
    "200": ok("File records.", "FileList", {
      ...nextLink,
      "X-Next-Cursor": { schema: { type: "string" }, description: "Cursor of the next page." },
    }),
  },
});

const fileId = {
  file_id: uuid({
    description: `A file's UUID. With a test key, the sandbox id \`file_sandbox_example\` is accepted too.`,
    sandboxId: SANDBOX_FILE_ID,
  }),
};
const notFound = errorResponse(
  "No such file for this key's user (another user's file is reported the same way).",
);

export const getFile = operation({
  method: "get",
  path: "/api/files/{file_id}",
  operationId: "getFile",
  summary: "Read one file record",
  params: fileId,
  responses: { "200": ok("The file record.", "FileRecord"), "404": notFound },
});

export const deleteFile = operation({
  method: "delete",
  path: "/api/files/{file_id}",
  operationId: "deleteFile",
  summary: "Delete a file, its bytes and its passages",
  params: fileId,
  responses: { "200": ok("Deleted.", "Deleted"), "404": notFound },
});

export const getPreviewUrl = operation({
  method: "get",
  path: "/api/files/{file_id}/preview-url",
  operationId: "getPreviewUrl",
  summary: "A signed link that shows the file for one hour",
  description:
    "The link needs no API key. It serves the file's bytes inline with its content type and " +
    "supports HTTP Range; it stops working after an hour or once the file is deleted.",
  params: fileId,
  responses: { "200": ok("The signed link.", "PreviewUrl"), "404": notFound },
});

export const listFilePassages = operation({
  method: "get",
  path: "/api/files/{file_id}/passages",
  operationId: "listFilePassages",
  summary: "A file's passages in reading order: a document's text, a recording's transcript",
  description:
    "Extension. The passages search looks through, each with its locator, in the order they " +
    "come in the file; consecutive passages overlap a little (a line, or a couple of seconds of " +
    "speech). Pages through long files with `limit` and `cursor` (or `offset`). 409 while the file is not ready.",
  params: fileId,
  query: {
    offset: integer({
      description: "Passages to skip: 0, or the previous page's `next_offset`.",
      ge: 0,
      default: 0,
    }),
    limit: integer({
      ge: PASSAGE_PAGE_LIMITS.limitMin,
      le: PASSAGE_PAGE_LIMITS.limitMax,
      default: PASSAGE_PAGE_LIMITS.limitDefault,
    }),
    cursor: positionCursor({}),
  },
  responses: {
    "200": ok("A page of passages.", "FilePassages", nextLink),
    "404": notFound,
    "409": errorResponse("The file is not ready yet (or failed)."),
  },
});

export const fileOperations = [
  search,
  uploadFile,
  listFiles,
  getFile,
  deleteFile,
  getPreviewUrl,
  listFilePassages,
] as const;
