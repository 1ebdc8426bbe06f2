// What every section of the API suite shares: the running Locus and its clients (set by
// describeApi's beforeAll, so read them inside tests and hooks only), and the bodies' types.

import { waitForFile, waitForMeaning, type Client, type LocusProcess } from "@locus/testing";

export type Shape = "all-in-one" | "split";

export interface ApiSuite {
  /** Known when the suite is declared: sections may choose tests by it. */
  readonly shape: Shape;
  locus: LocusProcess;
  /** A pro user's live key, and the user's email. */
  live: Client;
  liveKey: string;
  liveEmail: string;
  /** A test key of the same user. */
  sandbox: Client;
  /** Another pro user, who must never see the first one's files. */
  other: Client;
}

export const MAX_UPLOAD = 3_000_000;

export interface FileBody {
  id: string;
  status: string;
  original_name: string;
  file_type: string;
  page_count: number | null;
  passage_count: number | null;
  error: { code: string; message: string } | null;
  [k: string]: unknown;
}
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface SearchBody {
  results: {
    content: string;
    score: number;
    file_id: string;
    locator: {
      page?: number;
      line?: number;
      line_end?: number;
      bbox?: Box;
      confidence?: number;
      timestamp?: number;
      timestamp_end?: number;
      source: string;
    };
    files: { original_name: string; file_type: string };
    highlights: { start: number; end: number }[];
  }[];
  count: number;
  [k: string]: unknown;
}

/**
 * Uploads a file and waits until it is done. `timeoutMs`: longer for work that queues on a busy
 * machine (office documents each take a LibreOffice run, LOCUS_EXTRACT_CONCURRENCY at a time).
 */
export async function uploadReady(
  c: Client,
  pdf: Buffer,
  name: string,
  timeoutMs?: number,
): Promise<FileBody> {
  const res = await c.upload(pdf, name);
  expect(res.status).toBe(200);
  const { file } = (await res.json()) as { file: FileBody };
  return (await waitForFile(c, file.id, timeoutMs)) as unknown as FileBody;
}

/** uploadReady, then until the meaning stage has encoded the file: what ai mode's meaning needs. */
export async function uploadEncoded(c: Client, pdf: Buffer, name: string): Promise<FileBody> {
  const record = await uploadReady(c, pdf, name);
  expect(record.status).toBe("ready");
  return (await waitForMeaning(c, record.id)) as unknown as FileBody;
}

/** Words of `text` on lines of at most `width` characters. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(" ")) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}
