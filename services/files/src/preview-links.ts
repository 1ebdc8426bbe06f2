import type { BlobStore, PresignedGetOptions } from "@locus/blob-store";
import type { FileRecord } from "@locus/metadata-store";
import type { PreviewLink } from "./files-api.ts";
import { PREVIEW_TTL_SECONDS, type PreviewClaims, type PreviewTokens } from "./preview-tokens.ts";

/** A preview link asked for: the file and its owner as the caller named them, the key or session asking. */
export interface PreviewRequest extends PreviewClaims {
  /** Where Locus is reached, for links back at it. */
  baseUrl: string;
}

/**
 * How a file's preview link is made: a link back at Locus, which serves the bytes itself, or the
 * blob store's own link. Chosen once, where the files module is built (see previewLinksFor).
 */
export interface PreviewLinks {
  /** A link that shows the file (the caller's, already looked up) inline for PREVIEW_TTL_SECONDS. */
  link(record: FileRecord, request: PreviewRequest): Promise<PreviewLink>;
  /** True when Locus serves the links (GET /previews/<token>, previewRouter) rather than the store. */
  readonly servedByLocus: boolean;
}

/**
 * Links to /previews/<token> on Locus, the token signed with the preview secret and good only while
 * the key or session that asked for it is.
 */
export class SignedPreviewLinks implements PreviewLinks {
  readonly servedByLocus = true;

  constructor(private readonly tokens: PreviewTokens) {}

  async link(_record: FileRecord, request: PreviewRequest): Promise<PreviewLink> {
    const { baseUrl, ...claims } = request;
    const { token, expiresAt } = await this.tokens.sign(claims);
    return { url: `${baseUrl}/previews/${token}`, expiresAt, expiresIn: PREVIEW_TTL_SECONDS };
  }
}

/** The blob store's own links (S3's presigned GET), which the store serves and Locus cannot revoke. */
export class BlobStorePreviewLinks implements PreviewLinks {
  readonly servedByLocus = false;

  constructor(private readonly presign: (key: string, options: PresignedGetOptions) => Promise<string>) {}

  async link(record: FileRecord): Promise<PreviewLink> {
    const expiresAt = new Date(Date.now() + PREVIEW_TTL_SECONDS * 1000);
    const url = await this.presign(record.blobKey, {
      expiresInSeconds: PREVIEW_TTL_SECONDS,
      contentType: record.mimeType,
      fileName: record.originalName,
    });
    return { url, expiresAt, expiresIn: PREVIEW_TTL_SECONDS };
  }
}

/** The store's own links when it can serve browsers itself, otherwise links Locus serves. */
export function previewLinksFor(blobs: BlobStore, tokens: PreviewTokens): PreviewLinks {
  const presign = blobs.presignedGetUrl?.bind(blobs);
  return presign ? new BlobStorePreviewLinks(presign) : new SignedPreviewLinks(tokens);
}
