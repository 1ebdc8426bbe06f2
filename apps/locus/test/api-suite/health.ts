import { schemaErrors } from "../openapi-validator.ts";
import { type ApiSuite } from "./shared.ts";

export function describeHealth(s: ApiSuite): void {
  describe("health and documentation", () => {
    it("answers /healthz and /readyz without a key", async () => {
      expect(await (await fetch(`${s.locus.baseUrl}/healthz`)).json()).toEqual({ status: "ok" });
      const ready = await fetch(`${s.locus.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      // A public port does not say what Locus runs on (the internal ports list their checks).
      expect(await ready.json()).toEqual({ status: "ready" });
    });

    it("serves OpenAPI 3.1 and a docs page that works offline", async () => {
      const doc = (await (await fetch(`${s.locus.baseUrl}/openapi.json`)).json()) as {
        openapi: string;
        info: { version: string };
      };
      expect(doc.openapi).toBe("3.1.0");
      expect(doc.info.version).toBe("1.0.0");
      // The checker used throughout this suite does reject a wrong body.
      expect(schemaErrors("FileRecord", { id: 1 })).not.toBeNull();
      const page = await fetch(`${s.locus.baseUrl}/docs`);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
      const html = await page.text();
      expect(html).not.toMatch(/https?:\/\//);
      expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'; script-src 'self';/);
      const bundle = await fetch(`${s.locus.baseUrl}/docs/assets/swagger-ui-bundle.js`);
      expect(bundle.status).toBe(200);
      await bundle.arrayBuffer();
      expect((await fetch(`${s.locus.baseUrl}/docs/assets/swagger-ui.css`)).status).toBe(200);
      // Only what the page uses: not swagger-ui-dist's demo page (the petstore) or its OAuth page.
      for (const unused of ["index.html", "oauth2-redirect.html", "swagger-initializer.js", "package.json"]) {
        expect({ unused, status: (await fetch(`${s.locus.baseUrl}/docs/assets/${unused}`)).status }).toEqual({
          unused,
          status: 404,
        });
      }
    });

    it("serves the dashboard with a policy that allows its own origin and the previews' only", async () => {
      const page = await fetch(`${s.locus.baseUrl}/dashboard`);
      const csp = page.headers.get("content-security-policy") ?? "";
      await page.text();
      expect(csp).not.toMatch(/ https?: | https?:;|https?:$/);
      // Locus serves the all-in-one shape's previews; S3 (its endpoint, presigned) the split shape's.
      const previews = s.shape === "all-in-one" ? "" : " http://127.0.0.1:\\d+";
      expect(csp).toMatch(new RegExp(`img-src 'self' blob: data:${previews};`));
      expect(csp).toMatch(new RegExp(`connect-src 'self'${previews};`));
      expect((await fetch(`${s.locus.baseUrl}/dashboard/assets/app.js`)).status).toBe(200);
      // The page itself only at /dashboard, with its headers.
      expect((await fetch(`${s.locus.baseUrl}/dashboard/assets/index.html`)).status).toBe(404);
    });

    it("answers unknown paths with 404 and wrong methods with 405, as JSON", async () => {
      const missing = await fetch(`${s.locus.baseUrl}/api/nothing-here`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ detail: "Not Found" });
      const wrong = await fetch(`${s.locus.baseUrl}/api/search`, { method: "POST" });
      expect(wrong.status).toBe(405);
      expect(await wrong.json()).toEqual({ detail: "Method Not Allowed" });
    });
  });
}
