import { schemaErrors } from "../openapi-validator.ts";
import { client, createUserWithKey, makePdf, makeTextImage, runCli } from "@locus/testing";
import { SignJWT } from "jose";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ApiSuite, type FileBody, uploadReady } from "./shared.ts";

export function describePreviewLinks(s: ApiSuite): void {
  describe("preview links", () => {
    let file: FileBody;
    let pdf: Buffer;

    beforeAll(async () => {
      pdf = await makePdf({ pages: [["Preview me, a page about narwhals."], ["And a second page."]] });
      file = await uploadReady(s.live, pdf, "narwhal notes.pdf");
    }, 180_000);

    it("hands out a one-hour link that serves the exact bytes inline without a key", async () => {
      const res = await s.live.get(`/api/files/${file.id}/preview-url`);
      const body = (await res.json()) as { url: string; expires_at: string; expires_in: number };
      expect(schemaErrors("PreviewUrl", body)).toBeNull();
      expect(body.expires_in).toBe(3600);
      const lifetime = Date.parse(body.expires_at) - Date.now();
      expect(lifetime).toBeGreaterThan(3590_000);
      expect(lifetime).toBeLessThanOrEqual(3600_000);
      expect(body.url).not.toContain(s.liveKey);

      const served = await fetch(body.url);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("application/pdf");
      expect(served.headers.get("content-disposition")).toMatch(/^inline; filename="narwhal notes.pdf"/);
      if (s.shape === "all-in-one") expect(served.headers.get("accept-ranges")).toBe("bytes");
      expect(Buffer.from(await served.arrayBuffer()).equals(pdf)).toBe(true);
    });

    it("serves byte ranges", async () => {
      const { url } = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as {
        url: string;
      };
      const part = await fetch(url, { headers: { Range: "bytes=10-19" } });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-range")).toBe(`bytes 10-19/${pdf.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(pdf.subarray(10, 20))).toBe(true);
      // Suffix and unsatisfiable ranges: Locus's own previews. In the split shape S3 answers them,
      // and s3rver (the test stand-in for S3) implements neither.
      if (s.shape === "all-in-one") {
        const tail = await fetch(url, { headers: { Range: "bytes=-5" } });
        expect(Buffer.from(await tail.arrayBuffer()).equals(pdf.subarray(pdf.length - 5))).toBe(true);
        const outside = await fetch(url, { headers: { Range: `bytes=${pdf.length + 10}-` } });
        expect(outside.status).toBe(416);
      }
    });

    it("refuses tampered links", async () => {
      const { url } = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as {
        url: string;
      };
      // Change one character in the middle of the signature (S3's, or the token's third part).
      const signature = /X-Amz-Signature=([0-9a-f]+)/.exec(url)?.[1] ?? url.split(".").at(-1) ?? "";
      const flipped = `${signature.slice(0, 5)}${signature[5] === "0" ? "1" : "0"}${signature.slice(6)}`;
      const tampered = url.replace(signature, flipped);
      expect(tampered).not.toBe(url);
      expect((await fetch(tampered)).status).toBe(403);
    });

    it("is never kept by a cache or sent on in a Referer, and a picture is shown sandboxed", async () => {
      const { url } = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as {
        url: string;
      };
      const served = await fetch(url);
      expect(served.headers.get("cache-control")).toBe("no-store");
      await served.arrayBuffer();
      if (s.shape !== "all-in-one") return; // S3 serves the split shape's links: only Cache-Control is ours
      expect(served.headers.get("referrer-policy")).toBe("no-referrer");
      // Chromium shows no PDF in a sandboxed document: a PDF is only kept from being framed.
      expect(served.headers.get("content-security-policy")).toBe("frame-ancestors 'self'");
      const picture = await makeTextImage({ lines: ["Sandboxed heron"], fontPx: 28 });
      const image = await s.live.upload(picture.data, "heron.png");
      const { file: pictureFile } = (await image.json()) as { file: FileBody };
      const link = (await (await s.live.get(`/api/files/${pictureFile.id}/preview-url`)).json()) as {
        url: string;
      };
      const shown = await fetch(link.url);
      expect(shown.headers.get("content-security-policy")).toBe("sandbox; frame-ancestors 'self'");
      expect(shown.headers.get("referrer-policy")).toBe("no-referrer");
      await shown.arrayBuffer();
    });

    if (s.shape === "all-in-one") {
      it("stops working when the key that asked for it is revoked", async () => {
        const second = await createUserWithKey(s.locus.dataDir, { email: s.liveEmail, env: s.locus.cliEnv });
        const asSecond = client(s.locus.baseUrl, second.key);
        const { url } = (await (await asSecond.get(`/api/files/${file.id}/preview-url`)).json()) as {
          url: string;
        };
        const kept = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as {
          url: string;
        };
        expect((await fetch(url)).status).toBe(200);
        expect((await runCli(s.locus.dataDir, ["keys", "revoke", second.key], s.locus.cliEnv)).code).toBe(0);
        const refused = await fetch(url);
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { detail: string }).detail).toMatch(/invalid or has expired/);
        // A link asked with another key of the same account still works.
        expect((await fetch(kept.url)).status).toBe(200);
      });

      // Links Locus signs itself; S3's own expiry is checked by the S3 blob store's tests.
      it("refuses expired links, with a sentence", async () => {
        const { url } = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as {
          url: string;
        };
        const token = url.split("/previews/")[1] ?? "";
        const [, p] = token.split(".");
        const secret = readFileSync(join(s.locus.dataDir, "signing.key"), "utf8").trim();
        const claims = JSON.parse(Buffer.from(p ?? "", "base64url").toString()) as {
          uid: string;
          sub: string;
          kid: string;
        };
        const past = Math.floor(Date.now() / 1000) - 7200;
        const expired = await new SignJWT({ uid: claims.uid, kid: claims.kid })
          .setProtectedHeader({ alg: "HS256" })
          .setSubject(claims.sub)
          .setAudience("locus:preview")
          .setIssuedAt(past)
          .setExpirationTime(past + 3600)
          .sign(new TextEncoder().encode(secret));
        const res = await fetch(url.replace(token, expired));
        expect(res.status).toBe(403);
        expect(((await res.json()) as { detail: string }).detail).toMatch(/expired/);
      });
    }
  });
}
