import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { BlobNotFoundError, inlineContentDisposition } from "@locus/blob-store";
import { Errors } from "@locus/contracts";
import { Router, type Request, type Response } from "express";
import rangeParser from "range-parser";
import type { Logger } from "@locus/runtime";
import type { FilesService } from "./files-service.ts";

/**
 * Serves a file's bytes to whoever holds a valid preview link: inline, with its type, and with
 * HTTP Range so viewers can fetch pages and players can seek. Refusals are LocusErrors, answered
 * by the process's error handler like every other.
 */
export function previewRouter(files: FilesService, logger: Logger): Router {
  const router = Router();

  const serve = async (req: Request, res: Response): Promise<void> => {
    const token = String(req.params.token ?? "");
    const content = await files.openPreview(token);
    if (content === "invalid") throw Errors.previewLinkInvalid();
    if (content === "gone") throw Errors.fileNotFound();
    const { record, sizeBytes, contentType } = content;
    res.setHeader("Content-Type", contentType);
    // The same header the S3 store has its presigned links answer with.
    res.setHeader("Content-Disposition", inlineContentDisposition(content.fileName));
    res.setHeader("Accept-Ranges", "bytes");
    // Never from a cache: a deleted file, or a link whose key was revoked, must not be shown again.
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("X-Content-Type-Options", "nosniff");
    // The link is a credential: it must not leave in a Referer.
    res.setHeader("Referrer-Policy", "no-referrer");
    // The file is shown with no script and no origin of its own. Not for PDFs: Chromium refuses to
    // run its PDF viewer in a sandboxed document (no sandbox token allows it), and a PDF can only
    // be sent as a PDF here (its type was sniffed from its bytes, and nosniff holds the browser to it).
    res.setHeader(
      "Content-Security-Policy",
      contentType === "application/pdf" ? "frame-ancestors 'self'" : "sandbox; frame-ancestors 'self'",
    );

    let range: { start: number; end: number } | undefined;
    const header = req.headers.range;
    if (header !== undefined && sizeBytes > 0) {
      const parsed = rangeParser(sizeBytes, header, { combine: true });
      if (parsed === -1) throw Errors.rangeNotSatisfiable(sizeBytes);
      // -2 (malformed) or several ranges: answer with the whole file, as HTTP allows.
      if (parsed !== -2 && parsed.type === "bytes" && parsed.length === 1 && parsed[0]) {
        range = { start: parsed[0].start, end: parsed[0].end };
      }
    }
    if (range) {
      res.status(206);
      res.setHeader("Content-Range", `bytes ${range.start}-${range.end}/${sizeBytes}`);
      res.setHeader("Content-Length", String(range.end - range.start + 1));
    } else {
      res.setHeader("Content-Length", String(sizeBytes));
    }
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    let body: Readable;
    try {
      body = await content.open(range);
    } catch (err) {
      if (!(err instanceof BlobNotFoundError)) throw err;
      // Deleted between the check and the read.
      res.removeHeader("Content-Length");
      res.removeHeader("Content-Range");
      throw Errors.fileNotFound();
    }
    try {
      await pipeline(body, res);
    } catch (err) {
      // The client went away mid-download, or the disk failed: nothing more can be sent.
      logger.debug({ err, fileId: record.id }, "preview stream ended early");
    }
  };

  router.get("/previews/:token", serve);
  return router;
}
