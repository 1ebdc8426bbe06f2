import type { FileRecordDto } from "@locus/contracts";
import type { FileRecord } from "@locus/metadata-store";

/** The file record as clients see it: snake_case, no storage details (blob key, owner). */
export function toFileDto(f: FileRecord): FileRecordDto {
  return {
    id: f.id,
    original_name: f.originalName,
    status: f.status,
    file_type: f.fileType,
    mime_type: f.mimeType,
    size_bytes: f.sizeBytes,
    page_count: f.pageCount,
    duration_s: f.durationS,
    passage_count: f.passageCount,
    progress: f.progress,
    metadata: f.metadata,
    error: f.error,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
    ...(f.aiVectors ? { ai_vectors: f.aiVectors } : {}),
  };
}
