import {
  client,
  type Client,
  createUserWithKey,
  makePdf,
  rateLimitBursts,
  waitForFile,
} from "@locus/testing";
import { type ApiSuite, type FileBody } from "./shared.ts";

export function describePlans(s: ApiSuite): void {
  describe("plans: rate limits and quotas", () => {
    it("limits a free account to 5 requests per second with 429, Retry-After and RateLimit headers", async () => {
      let free: Client | undefined;
      const bursts = await rateLimitBursts(async () => {
        const c = client(
          s.locus.baseUrl,
          (await createUserWithKey(s.locus.dataDir, { plan: "free", env: s.locus.cliEnv })).key,
        );
        free = c;
        return () => c.get("/api/files");
      });
      for (const { responses, allowed, windows } of bursts) {
        expect(responses.map((r) => r.status).filter((s) => s !== 200 && s !== 429)).toEqual([]);
        expect(allowed).toBeGreaterThanOrEqual(5);
        // 5 for each second the burst could span: a burst that took 1.2 s may see two windows.
        expect(allowed).toBeLessThanOrEqual(5 * windows);
      }
      // Only a burst within one second tells a limit of 5 from one of 10: one of them must be.
      const spans = bursts.map((b) => `${Math.round(b.elapsedMs)} ms`).join(", ");
      expect(bursts.some((b) => b.windows === 1) ? "one burst within a second" : spans).toBe(
        "one burst within a second",
      );
      const { responses } = bursts.at(-1)!;
      const refused = responses.find((r) => r.status === 429);
      expect(refused?.headers.get("retry-after")).toBe("1");
      expect(refused?.headers.get("ratelimit-limit")).toBe("5");
      expect(refused?.headers.get("ratelimit-remaining")).toBe("0");
      expect(((await refused!.json()) as { detail: string }).detail).toMatch(/5 requests per second/);
      await new Promise((r) => setTimeout(r, 1100));
      expect((await free!.get("/api/files")).status).toBe(200);
    });

    it("counts live uploads against the monthly quota; test keys do not count", async () => {
      const { email, key } = await createUserWithKey(s.locus.dataDir, { plan: "free", env: s.locus.cliEnv });
      const free = client(s.locus.baseUrl, key);
      const test = client(
        s.locus.baseUrl,
        (await createUserWithKey(s.locus.dataDir, { email, type: "test", env: s.locus.cliEnv })).key,
      );
      const pdf = await makePdf({ pages: [["Quota"]] });
      const pause = () => new Promise((r) => setTimeout(r, 1100)); // stay inside 5 requests/s
      for (let i = 0; i < 3; i++) expect((await test.upload(pdf, "t.pdf")).status).toBe(200);
      await pause();
      // A refused upload gives its quota back.
      expect((await free.upload(Buffer.from([0, 0x13, 0x37, 0, 0xde, 0xad]), "bad.pdf")).status).toBe(415);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await free.upload(pdf, `q${i}.pdf`);
        expect(res.status).toBe(200);
        ids.push(((await res.json()) as { file: FileBody }).file.id);
      }
      await pause();
      const refused = await free.upload(pdf, "q3.pdf");
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(/monthly quota of 2 uploads/);
      await pause();
      for (const id of ids) await waitForFile(free, id);
    });
  });
}
