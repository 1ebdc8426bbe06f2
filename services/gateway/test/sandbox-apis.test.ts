import { Readable } from "node:stream";
import type { FilesApi } from "@locus/files";
import type { User } from "@locus/metadata-store";
import type { SearchApi } from "@locus/search";
import type { Principal } from "../src/authenticate.ts";
import { apisChooser, SandboxFilesApi, SandboxSearchApi } from "../src/sandbox-apis.ts";
import { SAMPLE_PDF, SANDBOX_FILE_ID } from "../src/sandbox.ts";

const user = { id: "00000000-0000-4000-8000-000000000001" } as User;
const FILE_ID = "2f1c3a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b";

describe("the sandbox's APIs (test keys)", () => {
  it("answers a search with the mock passages, the query highlighted, marked sandbox", async () => {
    const search = await new SandboxSearchApi().search({
      userId: user.id,
      q: "aardvark",
      limit: 1,
      mode: "quick",
    });
    expect(search).toMatchObject({ count: 1, mode: "quick", sandbox: true });
    const [mock] = search.results;
    expect(mock?.file_id).toBe(SANDBOX_FILE_ID);
    const marked = (mock?.highlights ?? []).map((h) =>
      Array.from(mock?.content ?? "")
        .slice(h.start, h.end)
        .join(""),
    );
    expect(marked).toEqual(["aardvark"]);
    expect(mock?.locator.bbox).toBeDefined();

    const ai = await new SandboxSearchApi().search({ userId: user.id, q: "aardvark", limit: 10, mode: "ai" });
    expect(ai).toMatchObject({ count: 2, sandbox: true, summary_source: "sandbox", answered: true });
    expect(ai.citations?.map((c) => c.result_index)).toEqual([0, 1]);
    expect(typeof ai.summary).toBe("string");
  });

  it("answers a file get, a list and a preview link with the example document, storing nothing", async () => {
    const files = new SandboxFilesApi(1024);
    expect(await files.get(user.id, SANDBOX_FILE_ID)).toMatchObject({
      id: SANDBOX_FILE_ID,
      original_name: "sandbox-example.pdf",
      status: "ready",
      sandbox: true,
    });
    expect(await files.get(user.id, FILE_ID)).toMatchObject({ id: FILE_ID, sandbox: true });
    const page = await files.list(user.id, { limit: 10 });
    expect(page.files.map((f) => f.id)).toEqual([SANDBOX_FILE_ID]);
    expect(page.nextCursor).toBeNull();
    const link = await files.previewLink(user.id, SANDBOX_FILE_ID, "http://locus.test");
    expect(link).toMatchObject({ url: "http://locus.test/previews/sandbox", expiresIn: 3600 });
    expect(await files.passages(user.id, SANDBOX_FILE_ID, { offset: 0, limit: 100 })).toMatchObject({
      sandbox: true,
      next_offset: null,
    });
  });

  it("answers an upload at once with the mock record, after the same checks as live keys", async () => {
    const files = new SandboxFilesApi(1024 * 1024);
    const record = await files.upload(user, { originalName: "mine.pdf", body: Readable.from([SAMPLE_PDF]) });
    expect(record).toMatchObject({
      id: SANDBOX_FILE_ID,
      status: "ready",
      sandbox: true,
      original_name: "mine.pdf",
      file_type: "pdf",
      size_bytes: SAMPLE_PDF.length,
    });
    await expect(
      files.upload(user, {
        originalName: "x.pdf",
        body: Readable.from([Buffer.from([0, 0x13, 0x37, 0, 0xde])]),
      }),
    ).rejects.toMatchObject({ status: 415 });
    // Text is a document, as for live keys.
    await expect(
      files.upload(user, { originalName: "notes.md", body: Readable.from([Buffer.from("# Notes\n")]) }),
    ).resolves.toMatchObject({ file_type: "document", mime_type: "text/markdown", page_count: null });
    await expect(
      new SandboxFilesApi(10).upload(user, { originalName: "big.pdf", body: Readable.from([SAMPLE_PDF]) }),
    ).rejects.toMatchObject({ status: 413 });
  });

  it("is chosen for test keys only, and marks the answers the gateway builds", () => {
    const live = { files: {} as FilesApi, search: {} as SearchApi };
    const apisFor = apisChooser(live, 1024);
    const principal = (sandbox: boolean) => ({ user, key: null, sessionId: null, sandbox }) as Principal;
    const test = apisFor(principal(true));
    expect(test.files).toBeInstanceOf(SandboxFilesApi);
    expect(test.search).toBeInstanceOf(SandboxSearchApi);
    expect(test).toMatchObject({ sandboxField: { sandbox: true } });
    expect(apisFor(principal(false))).toEqual({ ...live, sandboxField: {} });
  });
});
