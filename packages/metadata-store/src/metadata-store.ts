import type { FileError, FileStatus, FileType } from "@locus/contracts";

export type Plan = "free" | "pro" | "enterprise";
export type KeyType = "live" | "test";

export interface User {
  id: string;
  email: string;
  plan: Plan;
  createdAt: string;
}

/** A signed-in dashboard session; the cookie carries its id, the store decides if it still holds. */
export interface Session {
  id: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

export interface ApiKey {
  id: string;
  userId: string;
  name: string;
  type: KeyType;
  /** What people see of a key: its type prefix and a few characters, never enough to use it. */
  displayPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface FileRecord {
  id: string;
  userId: string;
  originalName: string;
  fileType: FileType;
  mimeType: string;
  sizeBytes: number;
  blobKey: string;
  status: FileStatus;
  error: FileError | null;
  pageCount: number | null;
  /** Length of a recording in seconds; null for other kinds. */
  durationS: number | null;
  passageCount: number | null;
  progress: number | null;
  createdAt: string;
  updatedAt: string;
}

export type FileUpdate = Partial<
  Pick<FileRecord, "status" | "error" | "pageCount" | "durationS" | "passageCount" | "progress">
>;

export interface FilePage {
  files: FileRecord[];
  /** Opaque cursor for the next page, or null on the last page. */
  nextCursor: string | null;
}

/**
 * Users, API keys, file records and usage. Embedded: SQLite; split: Postgres. Both through one
 * Kysely data layer and one set of migrations.
 */
export interface MetadataStore {
  /** Brings the schema up to date; safe to call from every process at start. */
  migrate(): Promise<void>;
  /** Throws when the store cannot be used (for /readyz). */
  check(): Promise<void>;
  close(): Promise<void>;

  createUser(input: { email: string; plan: Plan }): Promise<User>;
  findUserByEmail(email: string): Promise<User | null>;
  findUserById(id: string): Promise<User | null>;
  /** The user and their password hash (null when none is set), for signing in. */
  findCredentials(email: string): Promise<{ user: User; passwordHash: string | null } | null>;
  setPasswordHash(userId: string, passwordHash: string): Promise<void>;

  createSession(session: Omit<Session, "revokedAt">): Promise<Session>;
  /** The session and its user, when it exists, is not revoked and has not expired at `now`. */
  findActiveSession(id: string, now: string): Promise<{ session: Session; user: User } | null>;
  revokeSession(id: string, at: string): Promise<void>;

  /** Stores a key by its hash; the key itself is never stored. */
  createKey(input: {
    userId: string;
    name: string;
    type: KeyType;
    displayPrefix: string;
    hash: string;
  }): Promise<ApiKey>;
  /** The unrevoked key with this hash and its owner, or null. */
  findActiveKeyByHash(hash: string): Promise<{ key: ApiKey; user: User } | null>;
  listKeys(userId: string): Promise<ApiKey[]>;
  /**
   * Revokes by key id (of that user only, when `userId` is given) or by key hash; returns the
   * revoked key, or null when none matched.
   */
  revokeKey(by: { id: string; userId?: string } | { hash: string }): Promise<ApiKey | null>;
  touchKey(id: string, at: string): Promise<void>;

  createFile(record: FileRecord): Promise<void>;
  getFile(userId: string, fileId: string): Promise<FileRecord | null>;
  /** Any user's file: for workers that act on messages, never for request handlers. */
  getFileById(fileId: string): Promise<FileRecord | null>;
  getFiles(userId: string, fileIds: readonly string[]): Promise<FileRecord[]>;
  /** Newest first. */
  listFiles(userId: string, options: { limit: number; cursor?: string | undefined }): Promise<FilePage>;
  /**
   * Files left pending or processing, oldest first: work to pick up again after a crash. With
   * updatedBefore, only those that have not moved since then (stalled work).
   */
  listUnfinishedFiles(options: { limit: number; updatedBefore?: string }): Promise<FileRecord[]>;
  /**
   * Claims an unfinished file for re-publishing: touches it only if it has not changed since it was
   * read (its `updated_at` is still `seenUpdatedAt`), in one statement. Of several sweepers that
   * read the same stalled file, one gets the record back; the others get null and leave it alone.
   */
  claimUnfinishedFile(fileId: string, seenUpdatedAt: string): Promise<FileRecord | null>;
  /** Every user's files in one status, by id, a page at a time (afterId: the last id of the previous page). */
  listFilesWithStatus(
    status: FileStatus,
    options: { limit: number; afterId?: string },
  ): Promise<FileRecord[]>;
  updateFile(fileId: string, update: FileUpdate): Promise<FileRecord | null>;
  deleteFile(userId: string, fileId: string): Promise<FileRecord | null>;

  /**
   * Takes one upload from this month's quota if any is left (quota 0 = unlimited).
   * Returns false when the quota is used up. Atomic across processes.
   */
  reserveUpload(userId: string, month: string, quota: number): Promise<boolean>;
  /** Gives back an upload reserved for a request that then failed. */
  releaseUpload(userId: string, month: string): Promise<void>;
  uploadsThisMonth(userId: string, month: string): Promise<number>;
}
