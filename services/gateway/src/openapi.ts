import { PASSAGE_PAGE_LIMITS, SEARCH_LIMITS } from "@locus/contracts";
import { MAX_NAME_LENGTH } from "@locus/files";
import { LIST_LIMITS } from "./validation.ts";

/**
 * OpenAPI 3.1 description of the public interface (v1.0.0), including every choice made where the
 * interface leaves a detail open. Tests check real responses against these schemas.
 */
const errorBody = {
  type: "object",
  required: ["detail"],
  properties: {
    detail: { type: "string", description: "What went wrong, in a sentence a person can act on." },
  },
  additionalProperties: false,
};

const errorResponse = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorMessage" } } },
});

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
  content: { "application/json": { schema: { $ref: "#/components/schemas/HTTPValidationError" } } },
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
      "Document search: upload PDFs, images, audio and video, then search what they say (text layers; " +
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
          "answered instead.",
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
            schema: { type: "string", enum: ["quick", "ai"], default: "quick" },
          },
        ],
        responses: {
          "200": {
            description: "Matching passages, best first.",
            headers: rateLimitHeaders,
            content: { "application/json": { schema: { $ref: "#/components/schemas/SearchResponse" } } },
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
          "M4A/AAC, OGG/Opus or FLAC, and video in MP4, MOV, MKV or WebM. A live upload " +
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
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["file"],
                  properties: { file: { $ref: "#/components/schemas/FileRecord" } },
                  additionalProperties: false,
                },
              },
            },
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
          "and `X-Next-Cursor`; pass that cursor back as `cursor` for the next page.",
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
        ],
        responses: {
          "200": {
            description: "File records.",
            headers: {
              Link: { schema: { type: "string" }, description: "Next page, when there is one." },
              "X-Next-Cursor": { schema: { type: "string" }, description: "Cursor of the next page." },
            },
            content: {
              "application/json": {
                schema: { type: "array", items: { $ref: "#/components/schemas/FileRecord" } },
              },
            },
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
            content: { "application/json": { schema: { $ref: "#/components/schemas/FileRecord" } } },
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
            content: { "application/json": { schema: { $ref: "#/components/schemas/Deleted" } } },
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
            content: { "application/json": { schema: { $ref: "#/components/schemas/PreviewUrl" } } },
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
            content: { "application/json": { schema: { $ref: "#/components/schemas/FilePassages" } } },
          },
          ...commonErrors,
          "404": notFound,
          "409": {
            description: "The file is not ready yet (or failed).",
            content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorMessage" } } },
          },
          "422": validationError,
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "An API key: sk_live_… or sk_test_…" },
    },
    schemas: {
      ErrorMessage: errorBody,
      ValidationError: {
        type: "object",
        required: ["loc", "msg", "type"],
        properties: {
          loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
          msg: { type: "string" },
          type: { type: "string" },
          input: {},
          ctx: { type: "object" },
        },
      },
      HTTPValidationError: {
        type: "object",
        required: ["detail"],
        properties: { detail: { type: "array", items: { $ref: "#/components/schemas/ValidationError" } } },
      },
      Locator: {
        type: "object",
        description: "Where a passage is. Keys that do not apply to the file's kind are left out.",
        required: ["source"],
        properties: {
          page: {
            type: "integer",
            minimum: 1,
            description: "Physical page of a PDF or of a multi-page TIFF, from 1; 1 for other images.",
          },
          line: {
            type: "integer",
            minimum: 1,
            description: "First line, counting non-empty lines from the top of the page, from 1.",
          },
          line_end: { type: "integer", minimum: 1, description: "Last line of the passage." },
          timestamp: {
            type: "number",
            minimum: 0,
            description:
              "Seconds into audio or video where the passage starts (to 0.01 s). In search results for " +
              "speech, where the matched words start, less 0.3 s so that playback begins just before them.",
          },
          timestamp_end: {
            type: "number",
            minimum: 0,
            description:
              "Seconds where it ends: in search results for speech, where the last matched word ends.",
          },
          bbox: {
            type: "object",
            description:
              "Where the passage's lines sit (in search results, the matched lines), from the top-left " +
              "corner: in pixels of the image as displayed (EXIF orientation applied) for images, in PDF " +
              "points (1/72 inch, the page at 72 dpi, as a viewer shows it) for PDF pages, text or scanned.",
            required: ["x", "y", "width", "height"],
            properties: {
              x: { type: "number" },
              y: { type: "number" },
              width: { type: "number" },
              height: { type: "number" },
            },
          },
          source: {
            type: "string",
            enum: ["text", "ocr", "speech", "screen"],
            description:
              "`text`: a PDF's text layer; `ocr`: read from an image or a scanned page; `speech`: spoken in " +
              "a recording or a video; `screen`: shown on screen in a video (with the interval it is visible).",
          },
          confidence: {
            type: "number",
            minimum: 0,
            maximum: 1,
            description: "For OCR and speech: the recogniser's mean confidence in the passage's text.",
          },
        },
        additionalProperties: false,
      },
      FileRecord: {
        type: "object",
        required: [
          "id",
          "original_name",
          "status",
          "file_type",
          "mime_type",
          "size_bytes",
          "page_count",
          "duration_s",
          "passage_count",
          "progress",
          "error",
          "created_at",
          "updated_at",
        ],
        properties: {
          id: { type: "string", description: "UUID; `file_sandbox_example` for test keys." },
          original_name: { type: "string" },
          status: { type: "string", enum: ["pending", "processing", "ready", "failed"] },
          file_type: { type: "string", enum: ["pdf", "image", "audio", "video"] },
          mime_type: { type: "string" },
          size_bytes: { type: "integer", minimum: 0 },
          page_count: { type: ["integer", "null"], minimum: 0 },
          duration_s: {
            type: ["number", "null"],
            minimum: 0,
            description:
              "Length of a recording in seconds (audio and video), once processed; null otherwise.",
          },
          passage_count: { type: ["integer", "null"], minimum: 0 },
          progress: {
            type: ["number", "null"],
            minimum: 0,
            maximum: 1,
            description: "Share of the work done while `processing`: pages read, for long scans too.",
          },
          error: {
            oneOf: [
              { type: "null" },
              {
                type: "object",
                required: ["code", "message"],
                properties: { code: { type: "string" }, message: { type: "string" } },
                additionalProperties: false,
              },
            ],
            description:
              "Why processing failed, when status is `failed`. Codes: `pdf_corrupt`, `pdf_encrypted`, " +
              "`pdf_timeout`, `pdf_too_complex`, `image_corrupt`, `image_too_large`, `image_unsupported`, " +
              "`ocr_timeout`, `media_corrupt`, `media_truncated`, `media_too_long`, `media_no_audio`, " +
              "`speech_engine_unavailable`, `file_missing`, `extraction_failed`, `indexing_failed`.",
          },
          created_at: { type: "string", format: "date-time" },
          updated_at: { type: "string", format: "date-time" },
          sandbox: { type: "boolean", const: true },
        },
        additionalProperties: false,
      },
      Highlight: {
        type: "object",
        description:
          "A stretch of a result's `content`: a word that matched the query, or (ai mode, a passage found " +
          "by meaning alone) the sentence closest to the question. Offsets count Unicode code points, " +
          "`end` exclusive: `content[start:end]` in Python, `Array.from(content).slice(start, end).join('')` " +
          "in JavaScript.",
        required: ["start", "end"],
        properties: { start: { type: "integer", minimum: 0 }, end: { type: "integer", minimum: 0 } },
        additionalProperties: false,
      },
      SearchResult: {
        type: "object",
        required: ["content", "score", "file_id", "locator", "files", "highlights"],
        properties: {
          content: { type: "string" },
          score: { type: "number", minimum: 0, maximum: 1 },
          file_id: { type: "string" },
          locator: { $ref: "#/components/schemas/Locator" },
          files: {
            type: "object",
            required: ["original_name", "file_type"],
            properties: { original_name: { type: "string" }, file_type: { type: "string" } },
            additionalProperties: false,
          },
          highlights: {
            type: "array",
            items: { $ref: "#/components/schemas/Highlight" },
            description: "What in `content` matched, in order; may be empty.",
          },
        },
        additionalProperties: false,
      },
      FilePassages: {
        type: "object",
        required: ["passages", "next_offset"],
        properties: {
          passages: {
            type: "array",
            items: {
              type: "object",
              required: ["content", "locator"],
              properties: { content: { type: "string" }, locator: { $ref: "#/components/schemas/Locator" } },
              additionalProperties: false,
            },
          },
          next_offset: {
            type: ["integer", "null"],
            minimum: 0,
            description: "The `offset` of the next page, or null on the last page.",
          },
          sandbox: { type: "boolean", const: true },
        },
        additionalProperties: false,
      },
      SearchResponse: {
        type: "object",
        required: ["results", "count"],
        properties: {
          results: { type: "array", items: { $ref: "#/components/schemas/SearchResult" } },
          count: { type: "integer", minimum: 0 },
          mode: { type: "string", enum: ["quick", "ai"] },
          sandbox: { type: "boolean", const: true },
          summary: { type: "string", description: "ai mode: the answer, with citation markers [n]." },
          citations: {
            type: "array",
            description:
              "ai mode: one entry per marker of the summary and place: a sentence found in several files is one " +
              "marker with an entry for each.",
            items: { $ref: "#/components/schemas/Citation" },
          },
          answered: {
            type: "boolean",
            description: "ai mode: false when the documents do not answer the question.",
          },
          summary_source: {
            type: "string",
            description:
              "ai mode: what wrote the summary: `local` (sentences picked from the documents, offline), a chat " +
              "model's name, or `sandbox` (a test key's sample).",
          },
          vector_source: {
            type: "string",
            description:
              "ai mode: what matched the question by meaning: `local` (offline word vectors), an embedding " +
              "model's name, or `sandbox`.",
          },
          fallbacks: {
            type: "array",
            description: "ai mode: remote engines that failed during this search, and what answered instead.",
            items: {
              type: "object",
              required: ["component", "engine", "used", "reason"],
              properties: {
                component: { type: "string", enum: ["embedder", "summarizer"] },
                engine: { type: "string" },
                used: { type: "string" },
                reason: { type: "string" },
              },
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
      Citation: {
        type: "object",
        required: ["n", "file_id", "original_name", "locator", "quote", "result_index"],
        properties: {
          n: {
            type: "integer",
            minimum: 1,
            description:
              "The marker [n] in the summary (repeated when its sentence is found in several places).",
          },
          file_id: { type: "string" },
          original_name: { type: "string" },
          locator: {
            $ref: "#/components/schemas/Locator",
            description:
              "Where the quote is: the cited result's locator, narrowed to the quoted sentence's lines (which may " +
              "reach a few lines past the result's to finish the sentence).",
          },
          quote: { type: "string", description: "The document's words the claim rests on: whole sentences." },
          result_index: {
            type: "integer",
            minimum: 0,
            description: "Position of the cited result in `results`.",
          },
        },
        additionalProperties: false,
      },
      PreviewUrl: {
        type: "object",
        required: ["url", "expires_at", "expires_in"],
        properties: {
          url: { type: "string", format: "uri" },
          expires_at: { type: "string", format: "date-time" },
          expires_in: { type: "integer", const: 3600 },
          sandbox: { type: "boolean", const: true },
        },
        additionalProperties: false,
      },
      Deleted: {
        type: "object",
        required: ["message", "id"],
        properties: {
          message: { type: "string" },
          id: { type: "string" },
          sandbox: { type: "boolean", const: true },
        },
        additionalProperties: false,
      },
    },
  },
} as const;
