import type { Generated } from "kysely";

/** Table shapes as Kysely sees them; the same for SQLite and Postgres. */
export interface UsersTable {
  id: string;
  email: string;
  plan: string;
  created_at: string;
  password_hash: Generated<string | null>;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  type: string;
  display_prefix: string;
  hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface FilesTable {
  id: string;
  user_id: string;
  original_name: string;
  file_type: string;
  mime_type: string;
  size_bytes: number;
  blob_key: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  page_count: number | null;
  duration_s: number | null;
  passage_count: number | null;
  progress: number | null;
  /** FileRecord.aiVectors: null where the passages got their vectors as they were indexed. */
  ai_vectors: Generated<string | null>;
  /** See ClaimedFile.requeues. */
  requeues: Generated<number>;
  /** The file's metadata object as JSON text (`{}` when none was given). */
  metadata: Generated<string>;
  created_at: string;
  updated_at: string;
}

/** One key and value of a file's metadata (see metadataTerms): what the file list filters on. */
export interface FileMetadataTermsTable {
  file_id: string;
  user_id: string;
  key: string;
  value: string;
}

export interface UsageTable {
  user_id: string;
  month: string;
  uploads: Generated<number>;
}

/** Searches and uploads per user, key and day (UTC): see UsageStore.recordActivity. */
export interface DailyUsageTable {
  user_id: string;
  /** The key's id; "" for a signed-in dashboard page. */
  key_id: string;
  /** YYYY-MM-DD. */
  day: string;
  searches: number;
  uploads: number;
}

/** See WebhookEndpoint; `events` is a JSON array of event types. */
export interface WebhookEndpointsTable {
  id: string;
  user_id: string;
  url: string;
  description: string;
  events: string;
  secret: string;
  created_at: string;
  updated_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  last_success_at: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

/** See WebhookDelivery; the lease columns say which worker holds it, until when. */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  user_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: string;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  redelivered_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** See StoredEvent: the event log; `payload` is the JSON body its webhook deliveries carry. */
export interface EventsTable {
  id: string;
  user_id: string;
  type: string;
  occurred_at: string;
  payload: string;
}

/** Messages recorded with the change that calls for them, until a relay publishes them (see OutboxStore). */
export interface OutboxTable {
  id: string;
  topic: string;
  /** The message as JSON text. */
  message: string;
  file_id: string | null;
  available_at: string;
  attempts: Generated<number>;
  created_at: string;
}

export interface Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
  files: FilesTable;
  file_metadata_terms: FileMetadataTermsTable;
  usage: UsageTable;
  daily_usage: DailyUsageTable;
  sessions: SessionsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  outbox: OutboxTable;
  events: EventsTable;
}
