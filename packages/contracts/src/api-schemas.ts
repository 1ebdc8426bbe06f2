import { z } from "zod";
import { ErrorMessageDto, HttpValidationErrorDto, ValidationIssueDto } from "./error-bodies.ts";
import {
  FileDeletedDto,
  FileListDto,
  FilePassagesDto,
  FileRecordDto,
  FileStatus,
  FileType,
  PreviewUrlDto,
  UploadedFileDto,
} from "./files.ts";
import { EventDto, EventPageDto } from "./events.ts";
import { Locator, PassageSource } from "./locator.ts";
import { CitationDto, HighlightDto, SearchMode, SearchResponseDto, SearchResultDto } from "./search.ts";
import {
  WebhookAttemptDto,
  WebhookDeletedDto,
  WebhookDeliveryDto,
  WebhookDeliveryPageDto,
  WebhookDeliverySummaryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
  WebhookEndpointWithSecretDto,
  WebhookEventType,
} from "./webhooks.ts";

/**
 * The public API's bodies under the names /openapi.json gives them (its `components.schemas`).
 * Where one of these is used inside another, the document refers to it by name.
 */
export const API_SCHEMAS = {
  ErrorMessage: ErrorMessageDto,
  ValidationError: ValidationIssueDto,
  HTTPValidationError: HttpValidationErrorDto,
  FileType,
  FileStatus,
  SearchMode,
  PassageSource,
  Locator,
  FileRecord: FileRecordDto,
  UploadedFile: UploadedFileDto,
  FileList: FileListDto,
  FilePassages: FilePassagesDto,
  PreviewUrl: PreviewUrlDto,
  Deleted: FileDeletedDto,
  Highlight: HighlightDto,
  SearchResult: SearchResultDto,
  Citation: CitationDto,
  SearchResponse: SearchResponseDto,
  WebhookEventType,
  WebhookEndpoint: WebhookEndpointDto,
  WebhookEndpointWithSecret: WebhookEndpointWithSecretDto,
  WebhookEndpointList: WebhookEndpointListDto,
  WebhookAttempt: WebhookAttemptDto,
  WebhookDeliverySummary: WebhookDeliverySummaryDto,
  WebhookDelivery: WebhookDeliveryDto,
  WebhookDeliveryPage: WebhookDeliveryPageDto,
  WebhookDeleted: WebhookDeletedDto,
  Event: EventDto,
  EventPage: EventPageDto,
} as const;

export type ApiSchemaName = keyof typeof API_SCHEMAS;
export type JsonSchema = z.core.JSONSchema.JSONSchema;

/** Where a named schema sits in the OpenAPI document. */
export const apiSchemaRef = (name: ApiSchemaName) => `#/components/schemas/${name}`;

/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) of every API body, generated from the zod
 * schemas the services produce and check them with: what a response holds (`io: "output"`).
 */
export function apiJsonSchemas(): Record<ApiSchemaName, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(API_SCHEMAS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: "output",
    uri: (id) => apiSchemaRef(id as ApiSchemaName),
    // A timestamp's `format: date-time` says what it is; zod's long pattern for it would say it again.
    override: ({ jsonSchema }) => {
      if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
    },
  });
  // Each comes out as a document of its own ($schema, $id); in OpenAPI they are parts of one.
  const parts = Object.entries(schemas).map(([id, { $schema: _dialect, $id: _uri, ...schema }]) => [
    id,
    schema,
  ]);
  return Object.fromEntries(parts) as Record<ApiSchemaName, JsonSchema>;
}
