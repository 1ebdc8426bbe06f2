// `node --import tsx packages/testing/src/log-scan.ts`, run by `pnpm test` after the suites.
// Scans every log line the test run's Locus processes wrote (the run's folder in
// test-artifacts/logs, one file per process, see packages/testing/src/locus-process.ts) for
// secrets: API keys, JWTs (sessions, preview links, service identities), bearer credentials,
// password/secret/token fields that were not redacted, and the exact secret values each process was started with (matched by SHA-256
// digest of every word, so the values themselves are never written anywhere).
// Prints a summary, writes test-artifacts/resilience/log-scan.json, and exits 1 on any finding,
// naming the file and line with the secret masked.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, TEST_LOG_DIR } from "./locus-process.ts";

const PATTERNS: [string, RegExp][] = [
  ["API key", /\bsk_(?:live|test)_[A-Za-z0-9_-]{16,}/],
  ["JWT", /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/],
  ["bearer credential", /\bBearer\s+(?!\[redacted\])[A-Za-z0-9._~+/-]{8,}/i],
  [
    "unredacted secret field",
    /"(?:password|secret|token|authorization|cookie|api_key|apiKey|session)"\s*:\s*"(?!\[redacted\])[^"]+"/i,
  ],
  // A password in a URL, unless masked (amqplib's "user:***@host" form, or redacted).
  ["URL with credentials", /\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@"]+:(?!\*+@|\[redacted\]@)[^/\s@"]+@/i],
];

/**
 * Every run of characters a secret could be made of: each is hashed and looked up (with base64's
 * padding too, as "=" also joins names to values).
 */
const WORDS = /[A-Za-z0-9+/_.~-]{8,}/g;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const mask = (s: string) => (s.length <= 8 ? "********" : `${s.slice(0, 4)}…(${s.length} chars)`);

export interface LogScan {
  files: number;
  lines: number;
  findings: { file: string; line: number; kind: string; masked: string }[];
}

export function scanLogs(dir = TEST_LOG_DIR): LogScan {
  const scan: LogScan = { files: 0, lines: 0, findings: [] };
  if (!existsSync(dir)) return scan;
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".log"))
    .sort()) {
    scan.files++;
    const secretsFile = join(dir, name.replace(/\.log$/, ".secrets.json"));
    const digests = new Set<string>(
      existsSync(secretsFile) ? (JSON.parse(readFileSync(secretsFile, "utf8")) as string[]) : [],
    );
    const lines = readFileSync(join(dir, name), "utf8").split("\n");
    lines.forEach((text, i) => {
      if (text.length === 0) return;
      scan.lines++;
      for (const [kind, pattern] of PATTERNS) {
        const m = pattern.exec(text);
        if (m) scan.findings.push({ file: name, line: i + 1, kind, masked: mask(m[0]) });
      }
      if (digests.size > 0) {
        for (const word of text.match(WORDS) ?? []) {
          if ([word, `${word}=`, `${word}==`].some((w) => digests.has(sha256(w)))) {
            scan.findings.push({
              file: name,
              line: i + 1,
              kind: "secret from the environment",
              masked: mask(word),
            });
          }
        }
      }
    });
  }
  return scan;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const scan = scanLogs();
  const out = join(REPO_ROOT, "test-artifacts/resilience");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "log-scan.json"), `${JSON.stringify(scan, null, 2)}\n`);
  for (const f of scan.findings.slice(0, 50)) {
    process.stderr.write(`log scan: ${f.kind} in ${f.file}:${f.line}: ${f.masked}\n`);
  }
  process.stdout.write(
    `log scan: ${scan.lines} lines from ${scan.files} processes, ${scan.findings.length} secret${scan.findings.length === 1 ? "" : "s"} found\n`,
  );
  process.exit(scan.findings.length > 0 ? 1 : 0);
}
