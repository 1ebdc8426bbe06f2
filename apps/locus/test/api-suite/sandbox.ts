import { schemaErrors } from "../openapi-validator.ts";
import { makePdf } from "@locus/testing";
import { type ApiSuite, type FileBody, type SearchBody } from "./shared.ts";

export function describeSandbox(s: ApiSuite): void {
  describe("test keys (sandbox)", () => {
    it("answers an upload at once with the mock record, storing nothing", async () => {
      const before = ((await (await s.live.get("/api/files")).json()) as FileBody[]).length;
      const res = await s.sandbox.upload(await makePdf({ pages: [["Sandbox"]] }), "mine.pdf");
      expect(res.status).toBe(200);
      const { file } = (await res.json()) as { file: FileBody };
      expect(file).toMatchObject({
        id: "file_sandbox_example",
        status: "ready",
        sandbox: true,
        original_name: "mine.pdf",
        file_type: "pdf",
      });
      expect(schemaErrors("FileRecord", file)).toBeNull();
      expect(((await (await s.live.get("/api/files")).json()) as FileBody[]).length).toBe(before);
    });

    it("applies the same input checks as live keys", async () => {
      // Bytes of no kind Locus reads (text would be a document).
      expect((await s.sandbox.upload(Buffer.from([0, 0x13, 0x37, 0, 0xde, 0xad]), "x.pdf")).status).toBe(415);
      expect((await s.sandbox.get("/api/search")).status).toBe(422);
      expect((await s.sandbox.get("/api/files/nope")).status).toBe(422);
    });

    it("answers every endpoint with mock data marked sandbox, never live data", async () => {
      const search = (await (await s.sandbox.get("/api/search?q=aardvark&limit=1")).json()) as SearchBody;
      expect(search).toMatchObject({ count: 1, sandbox: true });
      expect(search.results[0]?.file_id).toBe("file_sandbox_example");
      expect(search.results[0]?.content).not.toMatch(/quarterly revenue/);
      expect(schemaErrors("SearchResponse", search)).toBeNull();
      // Shaped like live results: the query's word highlighted, a box for the lines.
      const mock = search.results[0];
      const marked = (mock?.highlights ?? []).map((h) =>
        Array.from(mock?.content ?? "")
          .slice(h.start, h.end)
          .join(""),
      );
      expect(marked).toEqual(["aardvark"]);
      expect(mock?.locator.bbox).toBeDefined();

      const ai = (await (await s.sandbox.get("/api/search?q=aardvark&mode=ai")).json()) as SearchBody;
      expect(ai).toMatchObject({ sandbox: true, summary_source: "sandbox" });
      expect(typeof ai.summary).toBe("string");

      const list = (await (await s.sandbox.get("/api/files")).json()) as FileBody[];
      expect(list.map((f) => f.id)).toEqual(["file_sandbox_example"]);
      expect(
        (await (await s.sandbox.get("/api/files/file_sandbox_example")).json()) as FileBody,
      ).toMatchObject({
        sandbox: true,
      });
      expect(await (await s.sandbox.del("/api/files/file_sandbox_example")).json()).toMatchObject({
        sandbox: true,
      });
      const preview = (await (await s.sandbox.get("/api/files/file_sandbox_example/preview-url")).json()) as {
        url: string;
      };
      const served = await fetch(preview.url);
      expect(served.headers.get("content-type")).toBe("application/pdf");
      const passages = (await (await s.sandbox.get("/api/files/file_sandbox_example/passages")).json()) as {
        passages: unknown[];
        sandbox: boolean;
      };
      expect(schemaErrors("FilePassages", passages)).toBeNull();
      expect(passages).toMatchObject({ sandbox: true, next_offset: null });
      expect(passages.passages.length).toBeGreaterThan(0);
    });

    it("does not accept the sandbox id with a live key", async () => {
      expect((await s.live.get("/api/files/file_sandbox_example")).status).toBe(422);
    });
  });
}
