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
  /** See ClaimedFile.requeues. */
  requeues: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface UsageTable {
  user_id: string;
  month: string;
  uploads: Generated<number>;
}

export interface Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
  files: FilesTable;
  usage: UsageTable;
  sessions: SessionsTable;
}
