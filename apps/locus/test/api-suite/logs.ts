import { type ApiSuite } from "./shared.ts";

export function describeLogs(s: ApiSuite): void {
  describe("logs", () => {
    it("never contain a key or a preview token", () => {
      const text = s.locus.logs.join("\n");
      expect(text).not.toMatch(/sk_(live|test)_[A-Za-z0-9_-]{8,}/);
      expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
    });
  });
}
