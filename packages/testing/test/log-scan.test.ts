import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanLogs } from "../src/log-scan.ts";

/** The scan that `pnpm test` runs over every process's log: it must see each kind of leak. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "locus-logscan-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ level: 30, service: "gateway", ...fields });

it("finds keys, tokens, bearer credentials, unredacted fields and the process's own secrets", () => {
  const s3Secret = "Zq8v0cW3kL1mN5pR7tY9uI2oP4aS6dF8gH0jK";
  writeFileSync(
    join(dir, "a.secrets.json"),
    JSON.stringify([createHash("sha256").update(s3Secret).digest("hex")]),
  );
  writeFileSync(
    join(dir, "a.log"),
    [
      line({ msg: "listening", url: "http://127.0.0.1:3000" }),
      line({ msg: "created", note: "sk_live_QmFzZTY0VXJsU2FmZUtleUJ5dGVzMTIzNDU2" }),
      line({ msg: "preview", url: "/previews/eyJhbGciOiJIUzI1NiJ9.eyJmaWxlIjoiMSJ9.c2lnbmF0dXJlLWJ5dGVz" }),
      line({ msg: "header", raw: "Authorization: Bearer abcdefgh12345678" }),
      line({ msg: "sign-in", password: "hunter2-is-weak" }),
      line({ msg: "config", s3: `secret=${s3Secret}` }),
      line({ msg: "connect", url: "postgres://locus:pa55word@db:5432/locus" }),
      line({ msg: "ok", password: "[redacted]", req: { headers: { authorization: "[redacted]" } } }),
    ].join("\n"),
  );
  const scan = scanLogs(dir);
  expect(scan).toMatchObject({ files: 1, lines: 8 });
  expect(scan.findings.map((f) => [f.line, f.kind])).toEqual([
    [2, "API key"],
    [3, "JWT"],
    [4, "bearer credential"],
    [5, "unredacted secret field"],
    [6, "secret from the environment"],
    [7, "URL with credentials"],
  ]);
  // The report masks what it found.
  for (const f of scan.findings) expect(f.masked.length).toBeLessThan(20);
});

it("passes ordinary log lines", () => {
  writeFileSync(
    join(dir, "b.log"),
    [
      line({ msg: "request", method: "GET", path: "/previews/:token", status: 200, ms: 1.2 }),
      line({ msg: "file ready", fileId: "6f1c0a2e-1b7e-4b8e-9a53-0c6f1f9d7d11", passages: 12, tokens: 4 }),
      line({ msg: "key created", prefix: "sk_live_QmFz", userId: "u1" }),
      line({ msg: "connected to RabbitMQ", url: "amqp://guest:***@127.0.0.1:5672" }),
    ].join("\n"),
  );
  expect(scanLogs(dir)).toEqual({ files: 1, lines: 4, findings: [] });
});
