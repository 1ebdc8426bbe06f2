import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { client, createUserWithKey, makePdf, pollUntil, waitForFile, type Client } from "@locus/testing";
import { schemaErrors } from "../openapi-validator.ts";
import type { ApiSuite, FileBody } from "./shared.ts";

interface Page {
  /** What identifies each item of the page, in order. */
  items: string[];
  /** The page's next cursor (the body's `next_cursor`, or the file list's `X-Next-Cursor`). */
  next: string | null;
}

const NEXT = /<([^>]+)>; rel="next"/;

/**
 * Walks a list from `first` to its end by following each page's `Link` header, checking on every
 * page that the link's cursor is the page's next cursor and that the last page has neither.
 */
async function walk(
  c: Client,
  first: string,
  read: (body: unknown, res: Response) => Page,
): Promise<string[]> {
  const seen: string[] = [];
  let path = first;
  for (let pages = 1; ; pages++) {
    const res = await c.get(path);
    expect([path, res.status]).toEqual([path, 200]);
    const page = read(await res.json(), res);
    seen.push(...page.items);
    const link = NEXT.exec(res.headers.get("link") ?? "")?.[1];
    if (page.next === null) {
      expect([path, link]).toEqual([path, undefined]);
      return seen;
    }
    const next = new URL(link ?? "http://no-link.invalid/");
    expect([path, next.searchParams.get("cursor")]).toEqual([path, page.next]);
    path = `${next.pathname}${next.search}`;
    if (pages > 50) throw new Error(`${first}: more than 50 pages`);
  }
}

/**
 * Beyond the seed: one paging rule for every list (contracts/src/paging.ts). Each list is walked
 * to its end by its `Link` header, a page at a time, and must give what one large page gives.
 */
export function describePaging(s: ApiSuite): void {
  describe("one paging rule", () => {
    const WORD = "ocelot";
    let c: Client;
    let receiver: Server;
    let endpointId = "";
    let files: FileBody[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        req.resume();
        req.on("end", () => res.writeHead(204).end());
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      const key = (await createUserWithKey(s.locus.dataDir, { plan: "pro", env: s.locus.cliEnv })).key;
      c = client(s.locus.baseUrl, key);
      const port = (receiver.address() as AddressInfo).port;
      const created = await fetch(`${s.locus.baseUrl}/api/webhooks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, events: ["file.ready"] }),
      });
      expect(created.status).toBe(201);
      endpointId = ((await created.json()) as { id: string }).id;
      // The first file has three pages, so it has several passages to page through.
      const pages = [1, 2, 3].map((p) => [`Page ${p}: the ${WORD} prowls.`, `An ${WORD} naps on page ${p}.`]);
      for (const [i, pdf] of [
        await makePdf({ pages }),
        await makePdf({ pages: [[`One ${WORD} in the second file.`]] }),
        await makePdf({ pages: [[`The third file's ${WORD}.`]] }),
      ].entries()) {
        const res = await c.upload(pdf, `paging-${i}.pdf`);
        files.push(((await res.json()) as { file: FileBody }).file);
      }
      files = (await Promise.all(files.map((f) => waitForFile(c, f.id)))) as unknown as FileBody[];
      const delivered = await pollUntil(
        async () => {
          const res = await c.get(`/api/webhooks/${endpointId}/deliveries`);
          const { deliveries } = (await res.json()) as { deliveries: { status: string }[] };
          return deliveries.filter((d) => d.status === "succeeded").length;
        },
        (succeeded) => succeeded === 3,
        { timeoutMs: 30_000, everyMs: 200 },
      );
      expect(delivered).toBe(3);
    }, 120_000);

    afterAll(async () => {
      receiver?.closeAllConnections();
      await new Promise((resolve) => receiver?.close(resolve));
    });

    const body = <T>(name: string, value: unknown): T => {
      expect(schemaErrors(name, value)).toBeNull();
      return value as T;
    };
    type Next = { next_cursor: string | null };
    const lists: [string, string, string, (value: unknown, res: Response) => Page][] = [
      [
        "the file list",
        "/api/files?limit=1",
        "/api/files?limit=1000",
        (value, res) => ({
          items: (value as FileBody[]).map((f) => f.id),
          next: res.headers.get("x-next-cursor"),
        }),
      ],
      [
        "search",
        `/api/search?q=${WORD}&limit=1`,
        `/api/search?q=${WORD}&limit=100`,
        (value) => {
          const page = body<Next & { results: { file_id: string; content: string }[] }>(
            "SearchResponse",
            value,
          );
          return { items: page.results.map((r) => `${r.file_id}:${r.content}`), next: page.next_cursor };
        },
      ],
      [
        "a file's passages",
        "/api/files/{file}/passages?limit=1",
        "/api/files/{file}/passages?limit=500",
        (value) => {
          const page = body<Next & { passages: { content: string }[] }>("FilePassages", value);
          return { items: page.passages.map((p) => p.content), next: page.next_cursor };
        },
      ],
      [
        "an endpoint's deliveries",
        "/api/webhooks/{endpoint}/deliveries?limit=1",
        "/api/webhooks/{endpoint}/deliveries?limit=100",
        (value) => {
          const page = body<Next & { deliveries: { id: string }[] }>("WebhookDeliveryPage", value);
          return { items: page.deliveries.map((d) => d.id), next: page.next_cursor };
        },
      ],
      [
        "the event log",
        "/api/events?limit=1",
        "/api/events?limit=100",
        (value) => {
          const page = body<Next & { events: { id: string }[] }>("EventPage", value);
          return { items: page.events.map((e) => e.id), next: page.next_cursor };
        },
      ],
    ];
    const at = (path: string) => path.replace("{file}", files[0]!.id).replace("{endpoint}", endpointId);

    it.each(lists)(
      "walks %s to its end a page at a time by its Link header",
      async (_name, first, whole, read) => {
        const walked = await walk(c, at(first), read);
        const all = await walk(c, at(whole), read);
        expect(all.length).toBeGreaterThanOrEqual(3);
        expect(walked).toEqual(all);
      },
    );

    it("takes the older ways too: search's offset, deliveries' before", async () => {
      const get = async (path: string) => {
        const res = await c.get(path);
        expect(res.status).toBe(200);
        return (await res.json()) as Next & { next_offset?: number | null; results?: unknown[] };
      };
      const first = await get(`/api/search?q=${WORD}&limit=2`);
      const byCursor = await get(`/api/search?q=${WORD}&limit=2&cursor=${first.next_cursor}`);
      const byOffset = await get(`/api/search?q=${WORD}&limit=2&offset=${first.next_offset}`);
      expect(byCursor).toEqual(byOffset);
      const deliveries = await get(`/api/webhooks/${endpointId}/deliveries?limit=1`);
      expect(
        await get(`/api/webhooks/${endpointId}/deliveries?limit=1&before=${deliveries.next_cursor}`),
      ).toEqual(await get(`/api/webhooks/${endpointId}/deliveries?limit=1&cursor=${deliveries.next_cursor}`));
    });

    it("refuses a cursor the list did not give, FastAPI-style, instead of starting over", async () => {
      const foreign = Buffer.from("not a cursor").toString("base64url");
      for (const [, first] of lists) {
        const res = await c.get(`${at(first)}&cursor=${foreign}`);
        const refusal = body<{ detail: { type: string; loc: string[] }[] }>(
          "HTTPValidationError",
          await res.json(),
        );
        expect([first, res.status, refusal.detail[0]]).toEqual([
          first,
          422,
          expect.objectContaining({ type: "value_error", loc: ["query", "cursor"] }),
        ]);
      }
      // A search's page said two ways at once.
      const page = (await (await c.get(`/api/search?q=${WORD}&limit=1`)).json()) as Next;
      const both = await c.get(`/api/search?q=${WORD}&limit=1&offset=1&cursor=${page.next_cursor}`);
      expect(both.status).toBe(422);
      expect(await both.json()).toMatchObject({
        detail: [{ type: "value_error", loc: ["query", "cursor"], msg: expect.stringMatching(/not both/) }],
      });
    });

    it("gives test keys the same rule", async () => {
      const res = await s.sandbox.get(`/api/search?q=${WORD}&limit=1`);
      const page = body<Next & { sandbox: boolean }>("SearchResponse", await res.json());
      expect(page).toMatchObject({ sandbox: true, next_cursor: expect.any(String) });
      expect(res.headers.get("link")).toContain(`cursor=${page.next_cursor}`);
    });
  });
}
