/** Small HTTP helpers for tests that talk to a running Locus. */
export interface Client {
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  del(path: string): Promise<Response>;
  /**
   * A multipart upload of `content` as part `field` (default `file`), with form fields before the
   * file part (`fields`) or after it (`fieldsAfter`).
   */
  upload(
    content: Buffer,
    name: string,
    field?: string,
    form?: { fields?: Record<string, string>; fieldsAfter?: Record<string, string> },
  ): Promise<Response>;
}

export function client(baseUrl: string, key: string | null): Client {
  const auth = (): Record<string, string> => (key === null ? {} : { Authorization: `Bearer ${key}` });
  return {
    get: (path, headers = {}) => fetch(`${baseUrl}${path}`, { headers: { ...auth(), ...headers } }),
    del: (path) => fetch(`${baseUrl}${path}`, { method: "DELETE", headers: auth() }),
    upload: (content, name, field = "file", extra = {}) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(extra.fields ?? {})) form.append(k, v);
      form.append(field, new Blob([new Uint8Array(content)]), name);
      for (const [k, v] of Object.entries(extra.fieldsAfter ?? {})) form.append(k, v);
      return fetch(`${baseUrl}/api/files/upload`, { method: "POST", headers: auth(), body: form });
    },
  };
}

/** Polls a file's record (riding out 429s) until `done` says so; throws after `timeoutMs` naming `awaited`. */
async function pollFile<T extends { status: string }>(
  c: Client,
  fileId: string,
  timeoutMs: number,
  done: (body: T) => boolean,
  awaited: (body: T) => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await c.get(`/api/files/${fileId}`);
    if (res.status !== 429) {
      const body = (await res.json()) as T;
      if (done(body)) return body;
      if (Date.now() > deadline) throw new Error(`file ${fileId}: ${awaited(body)} after ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, res.status === 429 ? 300 : 100));
  }
}

/** Polls a file until its status is final (ready or failed) and returns the record. */
export function waitForFile(
  c: Client,
  fileId: string,
  timeoutMs = 30_000,
): Promise<{ status: string; [k: string]: unknown }> {
  return pollFile<{ status: string; [k: string]: unknown }>(
    c,
    fileId,
    timeoutMs,
    (body) => body.status === "ready" || body.status === "failed",
    (body) => `still ${body.status}`,
  );
}

/**
 * Polls a ready file until the meaning stage has given its passages their vectors (`ai_vectors`
 * no longer `pending`) and returns the record. A file ready for keyword search may still be
 * waiting for them; where passages get their vectors as they are indexed there is no such field,
 * and the record comes back at once.
 */
export function waitForMeaning(
  c: Client,
  fileId: string,
  timeoutMs = 60_000,
): Promise<{ status: string; ai_vectors?: string; [k: string]: unknown }> {
  return pollFile<{ status: string; ai_vectors?: string; [k: string]: unknown }>(
    c,
    fileId,
    timeoutMs,
    (body) => body.ai_vectors !== "pending",
    () => "ai_vectors still pending",
  );
}

/** A file record as the API returns it: the fields tests read. */
export interface FileRecordBody {
  id: string;
  status: string;
  file_type: string;
  mime_type: string;
  page_count: number | null;
  duration_s: number | null;
  passage_count: number | null;
  error: { code: string; message: string } | null;
  [k: string]: unknown;
}

/** Uploads a file and waits until it is ready or failed; throws when the upload itself is refused. */
export async function uploadAndWait(
  c: Client,
  data: Buffer,
  name: string,
  timeoutMs = 60_000,
): Promise<FileRecordBody> {
  const res = await c.upload(data, name);
  if (res.status !== 200) throw new Error(`upload of ${name} answered ${res.status}: ${await res.text()}`);
  const { file } = (await res.json()) as { file: { id: string } };
  return (await waitForFile(c, file.id, timeoutMs)) as unknown as FileRecordBody;
}
