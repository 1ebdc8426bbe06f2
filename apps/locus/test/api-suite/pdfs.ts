import { schemaErrors } from "../openapi-validator.ts";
import { makePdf, pageWith, waitForFile } from "@locus/testing";
import { type ApiSuite, type FileBody, type SearchBody, uploadReady } from "./shared.ts";

export function describePdfs(s: ApiSuite): void {
  describe("upload, processing and search of PDFs", () => {
    let file: FileBody;

    beforeAll(async () => {
      const pdf = await makePdf({
        pages: [
          pageWith("Introduction to the annual report of Zebra Logistics.", 1),
          pageWith("Freight volumes rose sharply in the northern corridor.", 12),
          pageWith("The quarterly revenue of aardvark holdings grew by eleven percent.", 17),
        ],
      });
      file = await uploadReady(s.live, pdf, "annual report.pdf");
    }, 180_000);

    it("answers the upload with a pending record and ends ready with counts", () => {
      expect(file).toMatchObject({
        status: "ready",
        original_name: "annual report.pdf",
        file_type: "pdf",
        page_count: 3,
        error: null,
      });
      expect(file.passage_count).toBeGreaterThan(3);
      expect(schemaErrors("FileRecord", file)).toBeNull();
    });

    it("upload response matches the schema and starts pending", async () => {
      const res = await s.live.upload(
        await makePdf({ pages: [["A tiny page about gazelles."]] }),
        "tiny.pdf",
      );
      const body = (await res.json()) as { file: FileBody };
      expect(["pending", "processing"]).toContain(body.file.status);
      expect(body.file.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(body.file).toMatchObject({
        original_name: "tiny.pdf",
        file_type: "pdf",
        mime_type: "application/pdf",
      });
      expect(schemaErrors("FileRecord", body.file)).toBeNull();
      await waitForFile(s.live, body.file.id);
    });

    it("finds a phrase with its page and line", async () => {
      const res = await s.live.get(`/api/search?q=${encodeURIComponent("quarterly revenue aardvark")}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBe("1000");
      const body = (await res.json()) as SearchBody;
      expect(schemaErrors("SearchResponse", body)).toBeNull();
      expect(body.count).toBe(body.results.length);
      const top = body.results[0];
      expect(top).toBeDefined();
      expect(top?.file_id).toBe(file.id);
      expect(top?.content).toContain("quarterly revenue of aardvark holdings");
      const { bbox, ...where } = top?.locator ?? {};
      expect(where).toEqual({ page: 3, line: 17, line_end: 17, source: "text" });
      // The box of line 17 alone, in points from the top-left corner (makePdf: 60 + 16 × 16.5 points down).
      expect(bbox?.x).toBeCloseTo(72, 0);
      expect(Math.abs((bbox?.y ?? 0) - (60 + 16 * 16.5))).toBeLessThan(4);
      expect(bbox?.height).toBeLessThan(16);
      // Each matched word is highlighted, in code points of the content.
      const marked = (top?.highlights ?? []).map((h) =>
        Array.from(top?.content ?? "")
          .slice(h.start, h.end)
          .join(""),
      );
      expect(marked).toEqual(["quarterly", "revenue", "aardvark"]);
      expect(top?.files).toEqual({ original_name: "annual report.pdf", file_type: "pdf" });
      expect(top!.score).toBeGreaterThan(0);
      expect(top!.score).toBeLessThan(1);
    });

    it("orders results by score and respects limit", async () => {
      const body = (await (await s.live.get("/api/search?q=filler%20weather&limit=7")).json()) as SearchBody;
      expect(body.count).toBe(7);
      const scores = body.results.map((r) => r.score);
      expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    });

    it("pages through a file's passages in reading order, each with its locator", async () => {
      interface PassagePage {
        passages: { content: string; locator: SearchBody["results"][number]["locator"] }[];
        next_offset: number | null;
      }
      const all: PassagePage["passages"] = [];
      let offset: number | null = 0;
      let pages = 0;
      while (offset !== null) {
        const res = await s.live.get(`/api/files/${file.id}/passages?offset=${offset}&limit=10`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as PassagePage;
        expect(schemaErrors("FilePassages", body)).toBeNull();
        expect(body.passages.length).toBeLessThanOrEqual(10);
        all.push(...body.passages);
        offset = body.next_offset;
        pages += 1;
      }
      expect(pages).toBeGreaterThan(1);
      expect(all).toHaveLength(file.passage_count ?? -1);
      // Reading order: page by page, line by line; every locator public (no stored-only keys).
      const places = all.map((p) => (p.locator.page ?? 0) * 1000 + (p.locator.line ?? 0));
      expect([...places].sort((a, b) => a - b)).toEqual(places);
      expect(all.some((p) => p.content.includes("quarterly revenue of aardvark"))).toBe(true);
      expect(all.every((p) => !("line_boxes" in p.locator) && p.locator.bbox !== undefined)).toBe(true);
      // Paging checks its parameters as search does.
      const bad = await s.live.get(`/api/files/${file.id}/passages?limit=0`);
      expect(bad.status).toBe(422);
      expect(((await bad.json()) as { detail: { loc: string[] }[] }).detail[0]?.loc).toEqual([
        "query",
        "limit",
      ]);
    });

    it("never shows one user's passages to another", async () => {
      expect((await s.other.get(`/api/files/${file.id}/passages`)).status).toBe(404);
      const body = (await (await s.other.get("/api/search?q=aardvark")).json()) as SearchBody;
      expect(body).toMatchObject({ results: [], count: 0 });
      expect((await s.other.get(`/api/files/${file.id}`)).status).toBe(404);
      expect((await s.other.get(`/api/files/${file.id}/preview-url`)).status).toBe(404);
      expect((await s.other.del(`/api/files/${file.id}`)).status).toBe(404);
      const list = (await (await s.other.get("/api/files")).json()) as FileBody[];
      expect(list.find((f) => f.id === file.id)).toBeUndefined();
    });

    it.each([
      ["an unbalanced quote", '"unbalanced'],
      ["bare operators", "AND OR NOT"],
      ["a column filter", "content:aardvark"],
      ["a NEAR group", "NEAR(aardvark revenue)"],
      ["a prefix star", "aardvark*"],
      ["SQL", "'; DROP TABLE passages; --"],
      ["open brackets", "((("],
      ["emoji", "🦓🦓 zebra"],
      ["punctuation only", "-"],
      ["1000 characters", "a".repeat(1000)],
    ])("treats any text as a safe query: %s", async (_label, q) => {
      const res = await s.live.get(`/api/search?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(schemaErrors("SearchResponse", await res.json())).toBeNull();
      // The same text beside a word the document has (within the 1,000 characters a query may
      // have): results to check against the schema, not an empty list that passes any schema.
      const withWord = `${q.slice(0, 990)} aardvark`;
      const body = (await (
        await s.live.get(`/api/search?q=${encodeURIComponent(withWord)}`)
      ).json()) as SearchBody;
      expect(body.results.map((r) => r.file_id)).toContain(file.id);
      expect(schemaErrors("SearchResponse", body)).toBeNull();
    });

    it("treats operators as words", async () => {
      const body = (await (
        await s.live.get(`/api/search?q=${encodeURIComponent("aardvark OR (zzz")}`)
      ).json()) as SearchBody;
      expect(body.results[0]?.file_id).toBe(file.id);
    });
  });
}
