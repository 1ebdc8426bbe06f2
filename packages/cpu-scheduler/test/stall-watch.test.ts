import { setTimeout as sleep } from "node:timers/promises";
import { stallWatched } from "../src/index.ts";

/** A source that gives `items`, waiting `gapMs` before each, and ends early when stopped. */
function paced(items: string[], gapMs: number, stopped: { value: boolean }): AsyncIterable<string> {
  return (async function* () {
    for (const item of items) {
      await sleep(gapMs);
      if (stopped.value) return;
      yield item;
    }
  })();
}

describe("stallWatched", () => {
  test("a source that falls silent for longer than the stall time is stopped", async () => {
    const stopped = { value: false };
    const seen: string[] = [];
    for await (const item of stallWatched(paced(["a", "b"], 200, stopped), 50, () => (stopped.value = true)))
      seen.push(item);
    expect(stopped.value).toBe(true);
    expect(seen).toEqual([]);
  });

  test("a slow consumer is not a stall: only the wait for the next item counts", async () => {
    const stopped = { value: false };
    const seen: string[] = [];
    for await (const item of stallWatched(
      paced(["a", "b", "c"], 5, stopped),
      100,
      () => (stopped.value = true),
    )) {
      seen.push(item);
      await sleep(150);
    }
    expect(stopped.value).toBe(false);
    expect(seen).toEqual(["a", "b", "c"]);
  });
});
