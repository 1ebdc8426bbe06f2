// A FileFilter as every backend applies it, and a file's attributes as every backend stores them:
// one reading of both, so SQLite, PostgreSQL and Elasticsearch select the same files.

import {
  METADATA_LIMITS,
  isEmptyFilter,
  metadataTerms,
  type FileFilter,
  type FileType,
} from "@locus/contracts";
import type { IndexedFile } from "./search-index.ts";

/** The conditions of a filter that restricts something; each present one must hold. */
export interface FilterConditions {
  /** Distinct, and never empty when present (an empty list restricts nothing, as isEmptyFilter says). */
  fileIds?: string[];
  fileTypes?: string[];
  /** Exclusive bounds, spelled as `Date.toISOString()` spells them (see canonicalInstant). */
  createdAfter?: string;
  createdBefore?: string;
  /** Each (key, value) must be one of the file's metadata terms. */
  metadata: Array<[key: string, value: string]>;
  /**
   * Whether any condition asks about the file's attributes (type, dates, metadata): a file
   * indexed without attributes passes none of those.
   */
  asksAttributes: boolean;
  /**
   * True when no file can pass: a metadata key no file's metadata can hold (keys are checked
   * against METADATA_LIMITS.keyPattern when files are uploaded). Backends answer [] without a
   * query, so such a key never reaches a query as a field name (Elasticsearch's `metadata.<key>`).
   */
  matchesNothing: boolean;
}

/** A file's attributes as the backends store them. */
export interface StoredAttributes {
  fileType: FileType;
  /** Canonical (canonicalInstant). */
  createdAt: string;
  /** Distinct (key, value) pairs, from metadataTerms. */
  terms: Array<[key: string, value: string]>;
}

/**
 * An instant in the one spelling every backend compares: `Date.toISOString()` (UTC, milliseconds).
 * A filter may say `2024-01-01T00:00:00Z`, which as text sorts after `2024-01-01T00:00:00.000Z`
 * (`.` < `Z`) although it is the same instant; SQLite compares the text.
 */
export function canonicalInstant(value: string, what: string): string {
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time)) {
    throw new TypeError(`${what} ${JSON.stringify(value)} is not an ISO 8601 instant`);
  }
  return new Date(time).toISOString();
}

/** The filter's conditions, or undefined when it restricts nothing (no filter, or only empty parts). */
export function filterConditions(filter: FileFilter | undefined): FilterConditions | undefined {
  if (!filter || isEmptyFilter(filter)) return undefined;
  const metadata = Object.entries(filter.metadata ?? {});
  const conditions: FilterConditions = {
    metadata,
    asksAttributes: false,
    matchesNothing: metadata.some(([key]) => !METADATA_LIMITS.keyPattern.test(key)),
  };
  if (filter.fileIds?.length) conditions.fileIds = [...new Set(filter.fileIds)];
  if (filter.fileTypes?.length) conditions.fileTypes = [...new Set(filter.fileTypes)];
  if (filter.createdAfter !== undefined) {
    conditions.createdAfter = canonicalInstant(filter.createdAfter, "createdAfter");
  }
  if (filter.createdBefore !== undefined) {
    conditions.createdBefore = canonicalInstant(filter.createdBefore, "createdBefore");
  }
  conditions.asksAttributes =
    conditions.fileTypes !== undefined ||
    conditions.createdAfter !== undefined ||
    conditions.createdBefore !== undefined ||
    conditions.metadata.length > 0;
  return conditions;
}

/** The file's attributes as stored, or undefined when it was indexed without them. */
export function storedAttributes(file: IndexedFile): StoredAttributes | undefined {
  const attributes = file.attributes;
  if (!attributes) return undefined;
  const seen = new Set<string>();
  const terms = metadataTerms(attributes.metadata).filter(([key, value]) => {
    const id = JSON.stringify([key, value]);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return {
    fileType: attributes.fileType,
    createdAt: canonicalInstant(attributes.createdAt, `File ${file.fileId}'s createdAt`),
    terms,
  };
}
