import type { BlobStore, PresignedGetOptions } from "@locus/blob-store";
import type { FileRecord } from "@locus/metadata-store";
import type { PreviewLink } from "./files-api.ts";
import { PREVIEW_TTL_SECONDS, type PreviewClaims, type PreviewTokens } from "./preview-tokens.ts";

/**
 * The type a file is shown with. Markdown is shown as the plain text it is (browsers download
 * text/markdown instead of showing it); text is said to be UTF-8, as its extractor reads it. An
 * uploaded HTML page is shown as a page only where its server sandboxes it (Locus's previews send
 * `Content-Security-Policy: sandbox`); a blob store's own link cannot, so there it is shown as its
 * source: its scripts must never run on the store's origin.
 */
export function previewContentType(mimeType: string, sandboxed = true): string {
  if (mimeType === "text/plain" || mimeType === "text/markdown") return "text/plain; charset=utf-8";
  if (mimeType === "text/html") return sandboxed ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
  return mimeType;
}

/** The name a document's PDF rendition is shown under: its own name, marked as the PDF it is. */
export function renditionName(originalName: string): string {
  return `${originalName}.pdf`;
}

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
  /**
   * A link that shows the file (the caller's, already looked up) inline for PREVIEW_TTL_SECONDS.
   * With `renditionKey` (an office document converted to PDF), the link shows that PDF and
   * `originalUrl` gives the original's bytes.
   */
  link(record: FileRecord, request: PreviewRequest, renditionKey?: string): Promise<PreviewLink>;
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

  async link(_record: FileRecord, request: PreviewRequest, renditionKey?: string): Promise<PreviewLink> {
    const { baseUrl, ...claims } = request;
    const { token, expiresAt } = await this.tokens.sign(claims);
    // openPreview finds the rendition itself; the original's link says it wants the original.
    const original = renditionKey ? await this.tokens.sign({ ...claims, original: true }) : undefined;
    return {
      url: `${baseUrl}/previews/${token}`,
      ...(original ? { originalUrl: `${baseUrl}/previews/${original.token}` } : {}),
      expiresAt,
      expiresIn: PREVIEW_TTL_SECONDS,
    };
  }
}

/** The blob store's own links (S3's presigned GET), which the store serves and Locus cannot revoke. */
export class BlobStorePreviewLinks implements PreviewLinks {
  readonly servedByLocus = false;

  constructor(private readonly presign: (key: string, options: PresignedGetOptions) => Promise<string>) {}

  async link(record: FileRecord, _request: PreviewRequest, renditionKey?: string): Promise<PreviewLink> {
    const expiresAt = new Date(Date.now() + PREVIEW_TTL_SECONDS * 1000);
    const original = await this.presign(record.blobKey, {
      expiresInSeconds: PREVIEW_TTL_SECONDS,
      contentType: previewContentType(record.mimeType, false),
      fileName: record.originalName,
    });
    if (!renditionKey) return { url: original, expiresAt, expiresIn: PREVIEW_TTL_SECONDS };
    const url = await this.presign(renditionKey, {
      expiresInSeconds: PREVIEW_TTL_SECONDS,
      contentType: "application/pdf",
      fileName: renditionName(record.originalName),
    });
    return { url, originalUrl: original, expiresAt, expiresIn: PREVIEW_TTL_SECONDS };
  }
}

/** The store's own links when it can serve browsers itself, otherwise links Locus serves. */
export function previewLinksFor(blobs: BlobStore, tokens: PreviewTokens): PreviewLinks {
  const presign = blobs.presignedGetUrl?.bind(blobs);
  return presign ? new BlobStorePreviewLinks(presign) : new SignedPreviewLinks(tokens);
}
