import { schemaErrors } from "../openapi-validator.ts";
import { makePdf, pageWith, waitForFile } from "@locus/testing";
import { type ApiSuite, type FileBody, type SearchBody } from "./shared.ts";

interface ValidationBody {
  detail: { type: string; loc: (string | number)[]; msg: string }[];
}

/**
 * Beyond the seed: an upload's `metadata`, the filters of search and the file list, and paging of
 * search results. Every filter must run inside the index (before the top-k cut) and only over the
 * caller's own files.
 */
export function describeFilters(s: ApiSuite): void {
  describe("metadata, filters and paging", () => {
    // A word no other section uses, so these files are the only ones it finds.
    const WORD = "quokka";
    let alpha: FileBody;
    let beta: FileBody;
    let gamma: FileBody;

    const upload = async (pdf: Buffer, name: string, metadata?: object): Promise<FileBody> => {
      const res = await s.live.upload(pdf, name, "file", {
        fields: metadata ? { metadata: JSON.stringify(metadata) } : {},
      });
      expect(res.status).toBe(200);
      const { file } = (await res.json()) as { file: FileBody };
      return file;
    };
    const search = async (query: string, client = s.live): Promise<SearchBody> => {
      const res = await client.get(`/api/search?${query}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as SearchBody;
      expect(schemaErrors("SearchResponse", body)).toBeNull();
      return body;
    };
    const filesOf = (body: SearchBody) => [...new Set(body.results.map((r) => r.file_id))].sort();

    beforeAll(async () => {
      // alpha says the word on every line of five pages: without a filter its passages fill any
      // short page of results; beta and gamma say it once.
      const many = Array.from({ length: 5 }, (_, p) =>
        Array.from({ length: 20 }, (_, i) => `Page ${p + 1} line ${i + 1}: the ${WORD} hops about.`),
      );
      const once = (line: string) => makePdf({ pages: [pageWith(line, 4, 8)] });
      const uploaded = [
        await upload(await makePdf({ pages: many }), "alpha.pdf", {
          team: "alpha",
          year: 2024,
          tags: ["field", "notes"],
        }),
        await upload(await once(`A lone ${WORD} in the beta report.`), "beta.pdf", {
          team: "beta",
          draft: true,
        }),
        await upload(await once(`The gamma memo names a ${WORD} too.`), "gamma.pdf"),
      ];
      const ready = (await Promise.all(uploaded.map((f) => waitForFile(s.live, f.id)))) as unknown as [
        FileBody,
        FileBody,
        FileBody,
      ];
      [alpha, beta, gamma] = ready;
    }, 180_000);

    it("keeps an upload's metadata on its record, and {} without it", async () => {
      expect(alpha.status).toBe("ready");
      expect(alpha.metadata).toEqual({ team: "alpha", year: 2024, tags: ["field", "notes"] });
      expect(gamma.metadata).toEqual({});
      const res = await s.live.get(`/api/files/${beta.id}`);
      const record = (await res.json()) as FileBody;
      expect(record.metadata).toEqual({ team: "beta", draft: true });
      expect(schemaErrors("FileRecord", record)).toBeNull();
    });

    it("refuses bad metadata with FastAPI's 422 and stores nothing", async () => {
      const before = ((await (await s.live.get("/api/files")).json()) as FileBody[]).length;
      const pdf = await makePdf({ pages: [["Never stored."]] });
      const cases: [string, string, (string | number)[]][] = [
        ["{not json", "json_invalid", ["body", "metadata"]],
        ['["a list"]', "dict_type", ["body", "metadata"]],
        ['{"bad key": 1}', "string_pattern_mismatch", ["body", "metadata", "bad key", "[key]"]],
        ['{"nested": {"a": 1}}', "value_error", ["body", "metadata", "nested"]],
        [JSON.stringify({ long: "x".repeat(5000) }), "string_too_long", ["body", "metadata"]],
      ];
      for (const [metadata, type, loc] of cases) {
        const res = await s.live.upload(pdf, "bad.pdf", "file", { fields: { metadata } });
        expect(res.status).toBe(422);
        const body = (await res.json()) as ValidationBody;
        expect(schemaErrors("HTTPValidationError", body)).toBeNull();
        expect(body.detail[0]).toMatchObject({ type, loc });
      }
      // Metadata after the file part: the file was already streaming in, so it is undone.
      const late = await s.live.upload(pdf, "late.pdf", "file", {
        fieldsAfter: { metadata: '{"team":"late"}' },
      });
      expect(late.status).toBe(422);
      expect(((await late.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", "metadata"]);
      // Before and after: the file was stored with the first; the later one is refused the same way.
      const twice = await s.live.upload(pdf, "twice.pdf", "file", {
        fields: { metadata: '{"team":"first"}' },
        fieldsAfter: { metadata: '{"team":"second"}' },
      });
      expect(twice.status).toBe(422);
      const after = ((await (await s.live.get("/api/files")).json()) as FileBody[]).length;
      expect(after).toBe(before);
    });

    it("filters search by metadata, file id, kind and upload time, inside the index", async () => {
      expect(filesOf(await search(`q=${WORD}`))).toEqual([alpha.id, beta.id, gamma.id].sort());
      expect(filesOf(await search(`q=${WORD}&metadata.team=beta`))).toEqual([beta.id]);
      expect(filesOf(await search(`q=${WORD}&metadata.year=2024&metadata.tags=notes`))).toEqual([alpha.id]);
      expect(filesOf(await search(`q=${WORD}&metadata.draft=true`))).toEqual([beta.id]);
      expect(filesOf(await search(`q=${WORD}&file_id=${beta.id}&file_id=${gamma.id}`))).toEqual(
        [beta.id, gamma.id].sort(),
      );
      expect((await search(`q=${WORD}&file_type=audio`)).results).toEqual([]);
      expect(filesOf(await search(`q=${WORD}&file_type=pdf&metadata.team=alpha`))).toEqual([alpha.id]);
      // Uploaded one after another: the bounds are exclusive.
      const after = encodeURIComponent(String(beta.created_at));
      expect(filesOf(await search(`q=${WORD}&created_after=${after}`))).toEqual([gamma.id]);
      expect(filesOf(await search(`q=${WORD}&created_before=${after}`))).toEqual([alpha.id]);
      // alpha's many passages would fill two results on their own: the filter runs before the cut.
      const unfiltered = await search(`q=${WORD}&limit=2`);
      expect(filesOf(unfiltered)).toEqual([alpha.id]);
      const onlyGamma = await search(`q=${WORD}&limit=2&file_id=${gamma.id}`);
      expect(onlyGamma.results.map((r) => r.file_id)).toEqual([gamma.id]);
      expect(onlyGamma.results[0]?.content).toContain("gamma memo");
    });

    it("filters ai mode's results and summary the same way", async () => {
      const body = await search(`q=${encodeURIComponent(`where is the ${WORD}`)}&mode=ai&metadata.team=beta`);
      expect(filesOf(body)).toEqual([beta.id]);
      const cited = new Set((body.citations as { file_id: string }[] | undefined)?.map((c) => c.file_id));
      expect([...cited].every((id) => id === beta.id)).toBe(true);
    });

    it("never lets a filter reach another user's files", async () => {
      const theirs = await search(`q=${WORD}&file_id=${alpha.id}`, s.other);
      expect(theirs.results).toEqual([]);
      const list = await s.other.get(`/api/files?file_id=${alpha.id}`);
      expect(await list.json()).toEqual([]);
    });

    it("pages search results with offset and next_offset, count keeping its meaning", async () => {
      const whole = await search(`q=${WORD}&limit=40`);
      expect(whole.count).toBeGreaterThan(12);
      const seen: string[] = [];
      let offset: number | null = 0;
      let pages = 0;
      while (offset !== null && pages < 20) {
        const page: SearchBody = await search(`q=${WORD}&limit=5&offset=${offset}`);
        expect(page.count).toBe(page.results.length);
        expect(page.count).toBeLessThanOrEqual(5);
        seen.push(...page.results.map((r) => `${r.file_id}:${r.content}`));
        offset = page.next_offset as number | null;
        pages += 1;
      }
      // The pages, one after another, are the one long ranking: nothing twice, nothing missing.
      expect(seen).toEqual(whole.results.map((r) => `${r.file_id}:${r.content}`));
      const last = await search(`q=${WORD}&limit=5&offset=1000`);
      expect(last).toMatchObject({ results: [], count: 0, next_offset: null });
    });

    it("filters the file list, and its next-page link keeps the filter", async () => {
      const listed = async (query: string) => {
        const res = await s.live.get(`/api/files?${query}`);
        expect(res.status).toBe(200);
        return { res, ids: ((await res.json()) as FileBody[]).map((f) => f.id) };
      };
      expect((await listed("metadata.team=alpha")).ids).toEqual([alpha.id]);
      expect((await listed(`file_id=${beta.id}&file_id=${gamma.id}`)).ids).toEqual([gamma.id, beta.id]);
      const first = await listed(`limit=1&file_id=${alpha.id}&file_id=${gamma.id}`);
      expect(first.ids).toEqual([gamma.id]);
      const link = first.res.headers.get("link") ?? "";
      const next = /<([^>]+)>; rel="next"/.exec(link)?.[1] ?? "";
      expect(next).toContain(`file_id=${alpha.id}`);
      const second = await listed(new URL(next).search.slice(1));
      expect(second.ids).toEqual([alpha.id]);
      expect(second.res.headers.get("link")).toBeNull();
    });

    it("answers bad filters and offsets with FastAPI's 422", async () => {
      const cases: [string, string, (string | number)[]][] = [
        ["file_type=spreadsheet", "enum", ["query", "file_type", 0]],
        ["file_id=not-a-uuid", "uuid_parsing", ["query", "file_id", 0]],
        ["created_after=yesterday", "datetime_from_date_parsing", ["query", "created_after"]],
        ["metadata.bad%20key=x", "string_pattern_mismatch", ["query", "metadata.bad key"]],
        ["offset=1001", "less_than_equal", ["query", "offset"]],
        ["offset=-1", "greater_than_equal", ["query", "offset"]],
      ];
      for (const [query, type, loc] of cases) {
        const res = await s.live.get(`/api/search?q=${WORD}&${query}`);
        expect(res.status).toBe(422);
        const body = (await res.json()) as ValidationBody;
        expect(schemaErrors("HTTPValidationError", body)).toBeNull();
        expect(body.detail[0]).toMatchObject({ type, loc });
      }
      const list = await s.live.get("/api/files?file_type=spreadsheet");
      expect(list.status).toBe(422);
    });

    it("gives test keys the same parameters, over the mock file", async () => {
      const pdf = await makePdf({ pages: [["Sandbox metadata."]] });
      const res = await s.sandbox.upload(pdf, "s.pdf", "file", { fields: { metadata: '{"team":"alpha"}' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { file: FileBody }).file.metadata).toEqual({ team: "alpha" });
      expect((await search(`q=${WORD}&file_type=audio`, s.sandbox)).results).toEqual([]);
      const paged = await search(`q=${WORD}&limit=1`, s.sandbox);
      expect(paged).toMatchObject({ count: 1, next_offset: 1, sandbox: true });
    });
  });
}
