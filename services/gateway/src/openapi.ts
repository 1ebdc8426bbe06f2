import {
  MAX_NAME_LENGTH,
  apiJsonSchemas,
  apiSchemaRef,
  METADATA_LIMITS,
  PASSAGE_PAGE_LIMITS,
  SEARCH_LIMITS,
  type ApiSchemaName,
} from "@locus/contracts";
import { LIST_LIMITS } from "./validation.ts";
import { webhookPaths } from "./openapi-webhooks.ts";

/**
 * OpenAPI 3.1 description of the public interface (v1.0.0), including every choice made where the
 * interface leaves a detail open. The operations are written here; every body's schema is
 * generated from the zod schema in @locus/contracts that the services produce it with, so the
 * document cannot drift from the code. Tests check real responses against these schemas.
 */
const schemas = apiJsonSchemas();

const json = (name: ApiSchemaName) => ({ "application/json": { schema: { $ref: apiSchemaRef(name) } } });

const errorResponse = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json("ErrorMessage"),
});

/**
 * The filters of search and the file list (parseFileFilter). `metadata.<key>=<value>` has a name of
 * the client's choosing, which OpenAPI cannot list: the operations' descriptions say it.
 */
const filterParams = [
  {
    name: "file_id",
    in: "query",
    required: false,
    description: `Only these files; repeat for several (at most ${SEARCH_LIMITS.fileIdsMax}).`,
    schema: { type: "array", items: { type: "string", format: "uuid" }, maxItems: SEARCH_LIMITS.fileIdsMax },
    style: "form",
    explode: true,
  },
  {
    name: "file_type",
    in: "query",
    required: false,
    description: "Only files of these kinds; repeat for several.",
    schema: { type: "array", items: { $ref: apiSchemaRef("FileType") } },
    style: "form",
    explode: true,
  },
  {
    name: "created_after",
    in: "query",
    required: false,
    description:
      "Only files uploaded strictly after this instant (ISO 8601; a date is its midnight UTC, no offset means UTC).",
    schema: { type: "string", format: "date-time" },
  },
  {
    name: "created_before",
    in: "query",
    required: false,
    description: "Only files uploaded strictly before this instant (as `created_after`).",
    schema: { type: "string", format: "date-time" },
  },
];

const FILTERS_TEXT =
  "Filters (`file_id`, `file_type`, `created_after`, `created_before`, and any number up to " +
  `${SEARCH_LIMITS.metadataFiltersMax} of \`metadata.<key>=<value>\`: the file's metadata has that value under ` +
  "that key, a number or boolean as JSON writes it, a list matching any of its items) all hold at once.";

const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests per second the plan allows.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current second.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: { type: "integer" } },
};

const commonErrors = {
  "401": errorResponse("Missing, malformed, unknown or revoked API key.", {
    "WWW-Authenticate": { schema: { type: "string" }, description: "Bearer challenge." },
  }),
  "429": errorResponse("The plan's rate limit (or, for uploads, the monthly quota) is used up.", {
    "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait before retrying." },
    ...rateLimitHeaders,
  }),
};

const validationError = {
  description: "A parameter breaks its rules (FastAPI/pydantic v2 format).",
  content: json("HTTPValidationError"),
};

const fileIdParam = {
  name: "file_id",
  in: "path",
  required: true,
  description: `A file's UUID. With a test key, the sandbox id \`file_sandbox_example\` is accepted too.`,
  schema: { type: "string", format: "uuid" },
};

const notFound = errorResponse(
  "No such file for this key's user (another user's file is reported the same way).",
);

export const openApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "Locus",
    version: "1.0.0",
    description:
      "Document search: upload PDFs, office and text documents, images, audio and video, then search what they say (text layers; " +
      "OCR for images, scanned pages and text on screen; speech to text). Each result carries a locator " +
      "(page and line for documents and images, with a box for OCR text; seconds for audio and video). " +
      "All paths need " +
      "`Authorization: Bearer <API key>`; test keys (`sk_test_`) get instant mock answers marked `sandbox: true`. " +
      "The web dashboard (`/dashboard`, where keys are made) calls these same endpoints with its session cookie " +
      "and an `X-CSRF-Token` header instead of a key, acting as the signed-in account's live key.",
  },
  servers: [{ url: "/" }],
  security: [{ bearerAuth: [] }],
  paths: {
    "/api/search": {
      get: {
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
          "same `q`, `mode`, filters and `limit`); null on the last page. In ai mode only the first page has the summary.",
        parameters: [
          {
            name: "q",
            in: "query",
            required: true,
            description: "Words to find. Any text is safe: operators and quotes are treated as plain words.",
            schema: {
              type: "string",
              minLength: SEARCH_LIMITS.qMinLength,
              maxLength: SEARCH_LIMITS.qMaxLength,
            },
          },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: {
              type: "integer",
              minimum: SEARCH_LIMITS.limitMin,
              maximum: SEARCH_LIMITS.limitMax,
              default: SEARCH_LIMITS.limitDefault,
            },
          },
          {
            name: "mode",
            in: "query",
            required: false,
            schema: { ...schemas.SearchMode, default: "quick" },
          },
          {
            name: "offset",
            in: "query",
            required: false,
            description: "Results to skip: the previous page's `next_offset`.",
            schema: { type: "integer", minimum: 0, maximum: SEARCH_LIMITS.offsetMax, default: 0 },
          },
          ...filterParams,
        ],
        responses: {
          "200": {
            description: "Matching passages, best first.",
            headers: rateLimitHeaders,
            content: json("SearchResponse"),
          },
          ...commonErrors,
          "422": validationError,
        },
      },
    },
    "/api/files/upload": {
      post: {
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
          "200": {
            description: "The new file record.",
            content: json("UploadedFile"),
          },
          "400": errorResponse("Empty file, bad name, or a multipart body that cannot be parsed."),
          ...commonErrors,
          "413": errorResponse("The file is larger than the server's upload limit (LOCUS_MAX_UPLOAD_BYTES)."),
          "415": errorResponse("The file's content is not a kind Locus accepts."),
          "422": validationError,
        },
      },
    },
    "/api/files": {
      get: {
        operationId: "listFiles",
        summary: "List the caller's files, newest first",
        description:
          'A bare JSON array. When more files remain, the response has a `Link: <...>; rel="next"` header ' +
          "and `X-Next-Cursor`; pass that cursor back as `cursor` (with the same filters) for the next page.\n\n" +
          FILTERS_TEXT,
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            schema: {
              type: "integer",
              minimum: LIST_LIMITS.min,
              maximum: LIST_LIMITS.max,
              default: LIST_LIMITS.default,
            },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            schema: { type: "string", minLength: 1, maxLength: 512 },
          },
          ...filterParams,
        ],
        responses: {
          "200": {
            description: "File records.",
            headers: {
              Link: { schema: { type: "string" }, description: "Next page, when there is one." },
              "X-Next-Cursor": { schema: { type: "string" }, description: "Cursor of the next page." },
            },
            content: json("FileList"),
          },
          ...commonErrors,
          "422": validationError,
        },
      },
    },
    "/api/files/{file_id}": {
      get: {
        operationId: "getFile",
        summary: "Read one file record",
        parameters: [fileIdParam],
        responses: {
          "200": {
            description: "The file record.",
            content: json("FileRecord"),
          },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
      delete: {
        operationId: "deleteFile",
        summary: "Delete a file, its bytes and its passages",
        parameters: [fileIdParam],
        responses: {
          "200": {
            description: "Deleted.",
            content: json("Deleted"),
          },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
    },
    "/api/files/{file_id}/preview-url": {
      get: {
        operationId: "getPreviewUrl",
        summary: "A signed link that shows the file for one hour",
        description:
          "The link needs no API key. It serves the file's bytes inline with its content type and " +
          "supports HTTP Range; it stops working after an hour or once the file is deleted.",
        parameters: [fileIdParam],
        responses: {
          "200": {
            description: "The signed link.",
            content: json("PreviewUrl"),
          },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
    },
    "/api/files/{file_id}/passages": {
      get: {
        operationId: "listFilePassages",
        summary: "A file's passages in reading order: a document's text, a recording's transcript",
        description:
          "Extension. The passages search looks through, each with its locator, in the order they " +
          "come in the file; consecutive passages overlap a little (a line, or a couple of seconds of " +
          "speech). Pages through long files with `offset` and `limit`. 409 while the file is not ready.",
        parameters: [
          fileIdParam,
          {
            name: "offset",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 0, default: 0 },
            description: "Passages to skip: 0, or the previous page's `next_offset`.",
          },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: {
              type: "integer",
              minimum: PASSAGE_PAGE_LIMITS.limitMin,
              maximum: PASSAGE_PAGE_LIMITS.limitMax,
              default: PASSAGE_PAGE_LIMITS.limitDefault,
            },
          },
        ],
        responses: {
          "200": {
            description: "A page of passages.",
            content: json("FilePassages"),
          },
          ...commonErrors,
          "404": notFound,
          "409": {
            description: "The file is not ready yet (or failed).",
            content: json("ErrorMessage"),
          },
          "422": validationError,
        },
      },
    },
    ...webhookPaths({ json, errorResponse, commonErrors, validationError }),
  },
  components: {
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "An API key: sk_live_… or sk_test_…" },
    },
    schemas,
  },
} as const;
