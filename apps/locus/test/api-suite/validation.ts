import { schemaErrors } from "../openapi-validator.ts";
import { type ApiSuite } from "./shared.ts";

export function describeValidation(s: ApiSuite): void {
  describe("validation errors, byte-compatible with FastAPI", () => {
    it("reports a missing q", async () => {
      const res = await s.live.get("/api/search");
      expect(res.status).toBe(422);
      expect(await res.text()).toBe(
        '{"detail":[{"type":"missing","loc":["query","q"],"msg":"Field required","input":null}]}',
      );
    });

    it("reports an empty q, a bad limit and a bad mode together", async () => {
      const res = await s.live.get("/api/search?q=&limit=abc&mode=deep");
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { type: string; loc: string[] }[] };
      expect(body.detail.map((d) => [d.type, d.loc.join(".")])).toEqual([
        ["string_too_short", "query.q"],
        ["int_parsing", "query.limit"],
        ["literal_error", "query.mode"],
      ]);
      expect(schemaErrors("HTTPValidationError", body)).toBeNull();
    });

    it.each([
      ["0", "greater_than_equal"],
      ["101", "less_than_equal"],
    ])("bounds limit=%s", async (limit, type) => {
      const res = await s.live.get(`/api/search?q=a&limit=${limit}`);
      expect(res.status).toBe(422);
      expect(((await res.json()) as { detail: { type: string }[] }).detail[0]?.type).toBe(type);
    });

    it("answers a URL too long for HTTP headers with a JSON 431", async () => {
      const res = await s.live.get(`/api/search?q=${"a".repeat(20_000)}`);
      expect(res.status).toBe(431);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/too large/);
    });

    it("caps q at 1000 characters", async () => {
      const res = await s.live.get(`/api/search?q=${"a".repeat(1001)}`);
      expect(res.status).toBe(422);
      expect(((await res.json()) as { detail: { type: string }[] }).detail[0]?.type).toBe("string_too_long");
    });

    it.each(["/api/files/not-a-uuid", "/api/files/123/preview-url"])(
      "refuses a file_id that is no UUID: %s",
      async (path) => {
        const res = await s.live.get(path);
        expect(res.status).toBe(422);
        const body = (await res.json()) as { detail: { type: string; loc: string[] }[] };
        expect(body.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", "file_id"] });
        const del = await s.live.del(path.replace("/preview-url", ""));
        expect(del.status).toBe(422);
      },
    );

    it("refuses an upload without a file part", async () => {
      const form = new FormData();
      form.append("other", "value");
      const res = await fetch(`${s.locus.baseUrl}/api/files/upload`, {
        method: "POST",
        headers: { Authorization: `Bearer ${s.liveKey}` },
        body: form,
      });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({
        detail: [{ type: "missing", loc: ["body", "file"], msg: "Field required", input: null }],
      });
      const bare = await fetch(`${s.locus.baseUrl}/api/files/upload`, {
        method: "POST",
        headers: { Authorization: `Bearer ${s.liveKey}` },
      });
      expect(bare.status).toBe(422);
    });
  });
}
