import { existsSync, mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey } from "@locus/metadata-store";
import { loadConfig } from "@locus/runtime";
import { client, makePdf, pageWith, uploadAndWait, type Client } from "@locus/testing";
import { buildLocus, type Locus } from "../src/index.ts";
import { consumerTimeoutMs } from "../src/infrastructure.ts";

/**
 * Locus built in the test's own process on its embedded defaults (SQLite, a temp data folder, the
 * in-process bus), its HTTP app served on a free port: the whole path from upload to a located
 * search hit, with no other process and no service to start.
 */
const silentEnv = (dir: string, extra: Record<string, string> = {}) =>
  loadConfig({ LOCUS_DATA_DIR: dir, LOCUS_LOG_LEVEL: "silent", ...extra });

function listen(locus: Locus): Promise<Server> {
  return new Promise((resolve) => {
    const server = locus.app.listen(0, "127.0.0.1", () => resolve(server));
  });
}

describe("buildLocus (in process, embedded defaults)", () => {
  let dir: string;
  let locus: Locus;
  let server: Server;
  let api: Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "locus-build-"));
    locus = buildLocus(silentEnv(dir));
    await locus.start();
    server = await listen(locus);
    const store = await locus.infra.metadataStore();
    // The pro plan: the free plan's 5 requests a second would refuse a search sent just after the
    // polls that waited for the file.
    const user = await store.createUser({ email: "reader@example.com", plan: "pro" });
    const generated = generateApiKey("live");
    await store.createKey({
      userId: user.id,
      name: "test",
      type: "live",
      hash: generated.hash,
      displayPrefix: generated.displayPrefix,
    });
    api = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, generated.key);
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await locus.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps its dependencies to itself on /readyz, since it serves the public API", async () => {
    const res = await api.get("/readyz");
    expect(res.status).toBe(200);
    // The public API runs in this process: readiness does not tell what Locus runs on.
    expect(await res.json()).toEqual({ status: "ready" });
  });

  it("takes a PDF from upload to a search hit on its page and line", async () => {
    const pdf = await makePdf({
      pages: [pageWith("filler", 3), pageWith("the heron waits by the weir", 12)],
    });
    const file = await uploadAndWait(api, pdf, "heron.pdf");
    expect(file.status).toBe("ready");
    const res = await api.get(`/api/search?q=${encodeURIComponent("heron weir")}&mode=quick`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      results: { file_id: string; locator: { page: number; line: number } }[];
    };
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results[0]).toMatchObject({ file_id: file.id, locator: { page: 2, line: 12 } });
  });

  it("serves the gateway's /previews/sandbox before the files module's /previews/:token", async () => {
    // The files module's route would answer a token it cannot read with 404.
    const res = await api.get("/previews/sandbox");
    expect(res.status).toBe(200);
  });
});

describe("buildLocus start that fails", () => {
  it("stops and closes what it started, and says why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "locus-build-"));
    try {
      const locus = buildLocus(
        silentEnv(dir, { LOCUS_OCR_ENGINE: "native", LOCUS_TESSERACT_PATH: join(dir, "no-tesseract") }),
      );
      await expect(locus.start()).rejects.toThrow(/tesseract/i);
      // Closed: the metadata database was opened, and is not held open (SQLite's -wal is gone).
      expect(existsSync(join(dir, "metadata.sqlite-wal"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

it("gives RabbitMQ consumers time for the longest allowed video, and never less than RabbitMQ's default", () => {
  // Four hours at 0.75 s a second, plus five minutes: the extractors' grace period in k8s/base.
  expect(consumerTimeoutMs(4 * 3600)).toBe(11_100_000);
  expect(consumerTimeoutMs(60)).toBe(30 * 60 * 1000);
});
