import { apiJsonSchemas } from "@locus/contracts";
import { fileOperations } from "./operations/files.ts";
import { openApiPaths } from "./operations/operation.ts";
import { eventOperations } from "./operations/events.ts";
import { webhookOperations } from "./operations/webhooks.ts";

/**
 * OpenAPI 3.1 description of the public interface (v1.0.0), including every choice made where the
 * interface leaves a detail open. The operations come from their declarations (operations/), the
 * same ones the gateway checks requests with; every body's schema is generated from the zod schema
 * in @locus/contracts that the services produce it with, so the document cannot drift from the
 * code. Tests check real responses against these schemas.
 */
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
  paths: openApiPaths([...fileOperations, ...webhookOperations, ...eventOperations]),
  components: {
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "An API key: sk_live_… or sk_test_…" },
    },
    schemas: apiJsonSchemas(),
  },
} as const;
