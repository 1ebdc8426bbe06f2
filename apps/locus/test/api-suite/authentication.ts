import { schemaErrors } from "../openapi-validator.ts";
import { client, createUserWithKey, runCli } from "@locus/testing";
import { type ApiSuite } from "./shared.ts";

export function describeAuthentication(s: ApiSuite): void {
  describe("authentication", () => {
    const endpoints = ["/api/search?q=x", "/api/files", "/api/files/3f2504e0-4f89-11d3-9a0c-0305e82c3301"];

    it.each([
      ["no header", {}],
      ["a non-bearer scheme", { Authorization: "Basic dXNlcjpwYXNz" }],
      ["a malformed key", { Authorization: "Bearer not-a-key" }],
      ["an unknown key", { Authorization: `Bearer sk_live_${"A".repeat(32)}` }],
      ["a live key presented as a test key", {}],
    ])("refuses %s with 401, a sentence and a Bearer challenge", async (label, headers) => {
      const h: Record<string, string> = { ...headers };
      if (label === "a live key presented as a test key")
        h.Authorization = `Bearer ${s.liveKey.replace("sk_live_", "sk_test_")}`;
      for (const path of endpoints) {
        const res = await fetch(`${s.locus.baseUrl}${path}`, { headers: h });
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
        const body = (await res.json()) as { detail: string };
        expect(typeof body.detail).toBe("string");
        expect(schemaErrors("ErrorMessage", body)).toBeNull();
      }
    });

    it("refuses a revoked key within a second, while the server runs", async () => {
      const { key } = await createUserWithKey(s.locus.dataDir, {
        email: s.liveEmail,
        type: "live",
        env: s.locus.cliEnv,
      });
      const c = client(s.locus.baseUrl, key);
      expect((await c.get("/api/files")).status).toBe(200);
      const revoked = await runCli(s.locus.dataDir, ["keys", "revoke", key], s.locus.cliEnv);
      expect(revoked.code).toBe(0);
      const started = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - started < 1000) status = (await c.get("/api/files")).status;
      expect(status).toBe(401);
    });

    it("lists keys by display prefix only, never the key", async () => {
      const listed = await runCli(s.locus.dataDir, ["keys", "list", "--email", s.liveEmail], s.locus.cliEnv);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(s.liveKey.slice(0, 12));
      expect(listed.stdout).not.toContain(s.liveKey);
      expect(listed.stdout).toMatch(/revoked|REVOKED/i);
    });
  });
}
