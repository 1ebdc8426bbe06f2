import type { Client } from "./http.ts";
import { makePdf } from "./pdf-factory.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A one-page PDF carrying a word no other file has, so its passages can be counted exactly. */
export const tokenPdf = (token: string): Promise<Buffer> =>
  makePdf({ pages: [[`Load file ${token} records the tide.`, "A second line about harbours.", "A third."]] });

/**
 * A file's record through any of the gateways, retrying through faults (a 5xx, a 429 or a refused
 * connection is not an answer).
 */
export async function fileRecordThrough(
  gateways: readonly Client[],
  id: string,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  for (let i = 0; ; i++) {
    const res = await gateways[i % gateways.length]!.get(`/api/files/${id}`).catch(() => null);
    if (res && res.status < 500 && res.status !== 429) {
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }
    await res?.body?.cancel();
    await sleep(200);
  }
}

/**
 * Waits until every file is ready or failed (or the deadline); returns the final records, null for
 * a file that is gone.
 */
export async function settleFiles(
  gateways: readonly Client[],
  ids: readonly string[],
  timeoutMs: number,
): Promise<Map<string, Record<string, unknown> | null>> {
  const deadline = Date.now() + timeoutMs;
  const final = new Map<string, Record<string, unknown> | null>();
  for (const id of ids) {
    for (;;) {
      const { status, body } = await fileRecordThrough(gateways, id);
      const done = status === 404 || body?.status === "ready" || body?.status === "failed";
      if (done || Date.now() > deadline) {
        final.set(id, status === 404 ? null : body);
        break;
      }
      await sleep(200);
    }
  }
  return final;
}
