/** Small HTTP helpers for tests that talk to a running Locus. */
export interface Client {
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  del(path: string): Promise<Response>;
  upload(content: Buffer, name: string, field?: string): Promise<Response>;
}

export function client(baseUrl: string, key: string | null): Client {
  const auth = (): Record<string, string> => (key === null ? {} : { Authorization: `Bearer ${key}` });
  return {
    get: (path, headers = {}) => fetch(`${baseUrl}${path}`, { headers: { ...auth(), ...headers } }),
    del: (path) => fetch(`${baseUrl}${path}`, { method: "DELETE", headers: auth() }),
    upload: (content, name, field = "file") => {
      const form = new FormData();
      form.append(field, new Blob([new Uint8Array(content)]), name);
      return fetch(`${baseUrl}/api/files/upload`, { method: "POST", headers: auth(), body: form });
    },
  };
}

/** Polls a file until its status is final (ready or failed) and returns the record. */
export async function waitForFile(
  c: Client,
  fileId: string,
  timeoutMs = 30_000,
): Promise<{ status: string; [k: string]: unknown }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await c.get(`/api/files/${fileId}`);
    if (res.status === 429) {
      await new Promise((r) => setTimeout(r, 300));
      continue;
    }
    const body = (await res.json()) as { status: string };
    if (body.status === "ready" || body.status === "failed") return body;
    if (Date.now() > deadline) throw new Error(`file ${fileId} still ${body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
