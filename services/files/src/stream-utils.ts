import { Readable, Transform, type TransformCallback } from "node:stream";

/**
 * Reads the first bytes of a stream (to sniff its kind) and gives back a stream that still
 * yields every byte, those first ones included.
 */
export async function peekStream(
  source: Readable,
  bytes: number,
): Promise<{ head: Buffer; stream: Readable }> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let total = 0;
  let ended = false;
  while (total < bytes) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(next.value);
    total += next.value.length;
  }
  const head = Buffer.concat(chunks);
  async function* replay(): AsyncGenerator<Buffer> {
    try {
      if (head.length > 0) yield head;
      if (ended) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      // When the reader stops early, stop the source too.
      if (!ended) await iterator.return?.();
    }
  }
  return { head: head.subarray(0, bytes), stream: Readable.from(replay(), { objectMode: false }) };
}

/** Passes bytes through and fails with the given error once more than maxBytes have passed. */
export class ByteLimit extends Transform {
  bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly makeError: () => Error,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) callback(this.makeError());
    else callback(null, chunk);
  }
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
