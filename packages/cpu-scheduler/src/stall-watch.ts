/**
 * The items of a streaming child's output, with a watchdog on each wait: when `stallMs` pass
 * before the next item arrives, `onStall` is called (to stop the child, whose stream then ends).
 * Only the wait counts: while the consumer works on an item the child is waiting for it, and a
 * slow reader (OCR, speech recognition, a busy machine) must not look like a hung tool.
 */
export async function* stallWatched<T>(
  source: AsyncIterable<T>,
  stallMs: number,
  onStall: () => void,
): AsyncGenerator<T> {
  const items = source[Symbol.asyncIterator]();
  for (;;) {
    const watchdog = setTimeout(onStall, stallMs);
    let next: IteratorResult<T>;
    try {
      next = await items.next();
    } finally {
      clearTimeout(watchdog);
    }
    if (next.done) return;
    yield next.value;
  }
}
