import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";

/** What `upload` accepts: a path on disk, a Blob (or File), or bytes in memory (a Buffer). */
export type UploadInput = string | Blob | Uint8Array;

/** Bytes handed to the connection per step, and so how often progress is reported. */
const CHUNK_BYTES = 64 * 1024;

interface UploadSource {
  name: string;
  size: number;
  /** The file's bytes in chunks; called again for each attempt (a retry sends them anew). */
  chunks: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

export async function uploadSource(input: UploadInput, name: string | undefined): Promise<UploadSource> {
  if (typeof input === "string") {
    const { size } = await stat(input);
    return {
      name: name ?? basename(input),
      size,
      chunks: () => createReadStream(input, { highWaterMark: CHUNK_BYTES }),
    };
  }
  if (input instanceof Blob) {
    const fileName = "name" in input && typeof input.name === "string" ? input.name : undefined;
    return {
      name: name ?? fileName ?? "upload",
      size: input.size,
      chunks: async function* () {
        for (let at = 0; at < input.size; at += CHUNK_BYTES) {
          yield new Uint8Array(await input.slice(at, at + CHUNK_BYTES).arrayBuffer());
        }
      },
    };
  }
  return {
    name: name ?? "upload",
    size: input.byteLength,
    chunks: function* () {
      for (let at = 0; at < input.byteLength; at += CHUNK_BYTES) yield input.subarray(at, at + CHUNK_BYTES);
    },
  };
}

/**
 * A name as a multipart `filename` parameter: UTF-8 as browsers send it (quotes and line breaks
 * escaped the way they escape them), plus `filename*` (RFC 5987), which servers prefer when given.
 */
function dispositionName(name: string): string {
  const quoted = name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
  const extended = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `filename="${quoted}"; filename*=UTF-8''${extended}`;
}

/**
 * The multipart/form-data body of an upload, as a stream read one chunk at a time: a chunk is read
 * (and counted as sent) only when the connection asks for the next one, which fetch does once the
 * previous chunk was written to the socket without filling its buffer. So `onProgress` follows the
 * bytes really going out, not how fast the file can be read. `metadata` goes before the file,
 * since Locus reads the parts in order and needs it before it stores the file.
 */
export function multipartBody(
  source: UploadSource,
  metadata: Record<string, unknown> | undefined,
  onProgress: ((sentBytes: number, totalBytes: number) => void) | undefined,
): { contentType: string; body: ReadableStream<Uint8Array> } {
  const boundary = `locus-${randomUUID()}`;
  const encoder = new TextEncoder();
  const metadataPart =
    metadata === undefined
      ? ""
      : `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n` +
        `Content-Type: application/json\r\n\r\n${JSON.stringify(metadata)}\r\n`;
  const head = encoder.encode(
    `${metadataPart}--${boundary}\r\nContent-Disposition: form-data; name="file"; ${dispositionName(source.name)}\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);

  async function* parts(): AsyncGenerator<Uint8Array> {
    yield head;
    let sent = 0;
    for await (const chunk of source.chunks()) {
      yield chunk;
      // The consumer asked for more: this chunk has gone to the connection.
      sent += chunk.byteLength;
      onProgress?.(sent, source.size);
    }
    yield tail;
  }
  const iterator = parts();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await iterator.return(undefined);
      },
    },
    // Nothing is read ahead of what the connection asks for.
    { highWaterMark: 0 },
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body };
}
