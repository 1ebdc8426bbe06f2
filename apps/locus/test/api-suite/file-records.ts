import { arraySchemaErrors, schemaErrors } from "../openapi-validator.ts";
import { client, createUserWithKey, makePdf, pageWith, waitForFile } from "@locus/testing";
import { type ApiSuite, type FileBody, type SearchBody, uploadReady } from "./shared.ts";

export function describeFileRecords(s: ApiSuite): void {
  describe("file records", () => {
    it("lists the caller's files newest first as a bare array, with cursor pages", async () => {
      const c = client(
        s.locus.baseUrl,
        (await createUserWithKey(s.locus.dataDir, { plan: "pro", env: s.locus.cliEnv })).key,
      );
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await c.upload(await makePdf({ pages: [[`Document number ${i}`]] }), `doc-${i}.pdf`);
        ids.push(((await res.json()) as { file: FileBody }).file.id);
      }
      const all = await c.get("/api/files");
      const body = (await all.json()) as FileBody[];
      expect(arraySchemaErrors("FileRecord", body)).toBeNull();
      expect(body.map((f) => f.id)).toEqual([...ids].reverse());
      expect(all.headers.get("link")).toBeNull();

      const first = await c.get("/api/files?limit=2");
      expect(((await first.json()) as FileBody[]).map((f) => f.id)).toEqual([ids[2], ids[1]]);
      const link = first.headers.get("link");
      expect(link).toMatch(/rel="next"/);
      const next = /<([^>]+)>/.exec(link ?? "")?.[1] ?? "";
      const second = await c.get(new URL(next).pathname + new URL(next).search);
      expect(((await second.json()) as FileBody[]).map((f) => f.id)).toEqual([ids[0]]);
      expect(second.headers.get("link")).toBeNull();
      for (const id of ids) await waitForFile(c, id);
    });

    it("reports an unknown file as 404 File not found", async () => {
      const res = await s.live.get("/api/files/3f2504e0-4f89-11d3-9a0c-0305e82c3301");
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: "File not found" });
    });

    it("deletes the record, the bytes and the passages", async () => {
      const pdf = await makePdf({
        pages: [pageWith("Okapi migration patterns in the lowland forest.", 4)],
      });
      const f = await uploadReady(s.live, pdf, "okapi.pdf");
      const preview = (await (await s.live.get(`/api/files/${f.id}/preview-url`)).json()) as { url: string };
      expect((await (await s.live.get("/api/search?q=okapi")).json()) as SearchBody).toMatchObject({
        count: 1,
      });

      const del = await s.live.del(`/api/files/${f.id}`);
      expect(del.status).toBe(200);
      const body = await del.json();
      expect(body).toEqual({ message: "File deleted", id: f.id });
      expect(schemaErrors("Deleted", body)).toBeNull();

      expect((await s.live.get(`/api/files/${f.id}`)).status).toBe(404);
      expect((await s.live.del(`/api/files/${f.id}`)).status).toBe(404);
      expect((await (await s.live.get("/api/search?q=okapi")).json()) as SearchBody).toMatchObject({
        count: 0,
      });
      expect((await fetch(preview.url)).status).toBe(404);
    });
  });
}
