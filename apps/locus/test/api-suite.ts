import { client, createUserWithKey, removeDataDir, type LocusProcess } from "@locus/testing";
import { describeAiMode } from "./api-suite/ai-mode.ts";
import { describeAuthentication } from "./api-suite/authentication.ts";
import { describeBadInput } from "./api-suite/bad-input.ts";
import { describeDocuments } from "./api-suite/documents.ts";
import { describeFileRecords } from "./api-suite/file-records.ts";
import { describeFilters } from "./api-suite/filters.ts";
import { describeHealth } from "./api-suite/health.ts";
import { describeLogs } from "./api-suite/logs.ts";
import { describeOcr } from "./api-suite/ocr.ts";
import { describePaging } from "./api-suite/paging.ts";
import { describePdfs } from "./api-suite/pdfs.ts";
import { describePlans } from "./api-suite/plans.ts";
import { describePreviewLinks } from "./api-suite/preview-links.ts";
import { describeRecordings } from "./api-suite/recordings.ts";
import { describeSandbox } from "./api-suite/sandbox.ts";
import { MAX_UPLOAD, type ApiSuite, type Shape } from "./api-suite/shared.ts";
import { describeValidation } from "./api-suite/validation.ts";

export type { Shape } from "./api-suite/shared.ts";

/**
 * The whole v1.0.0 interface as a black box, run against both shapes: the all-in-one process
 * (`pnpm start`: SQLite, local disk, in-process bus) and the split processes (`pnpm start:split`:
 * Postgres, RabbitMQ, Redis, S3). What differs between them is only where a preview link points
 * (Locus itself, or S3) and which dependencies /readyz lists. Each concern's tests are in
 * `api-suite/`, run in this order against one started Locus.
 */
export const SUITE_ENV = {
  LOCUS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
  LOCUS_RATE_LIMIT_PRO: "1000",
  LOCUS_QUOTA_FREE: "2",
  // The paging section's webhook receiver listens on loopback.
  LOCUS_WEBHOOK_ALLOW_ADDRESSES: "loopback",
};

export function describeApi(shape: Shape, start: () => Promise<LocusProcess>, label?: string): void {
  describe(label ?? shape, () => {
    // Filled in by beforeAll, before any section's hooks or tests run.
    const s = { shape } as ApiSuite;

    beforeAll(async () => {
      s.locus = await start();
      const env = s.locus.cliEnv;
      const a = await createUserWithKey(s.locus.dataDir, { plan: "pro", env });
      s.liveKey = a.key;
      s.liveEmail = a.email;
      s.live = client(s.locus.baseUrl, a.key);
      const testKey = await createUserWithKey(s.locus.dataDir, { email: a.email, type: "test", env });
      s.sandbox = client(s.locus.baseUrl, testKey.key);
      const other = await createUserWithKey(s.locus.dataDir, { plan: "pro", env });
      s.other = client(s.locus.baseUrl, other.key);
    }, 180_000);

    afterAll(async () => {
      const code = await s.locus.stop();
      removeDataDir(s.locus.dataDir);
      expect(code).toBe(0);
    });

    describeHealth(s);
    describeAuthentication(s);
    describeValidation(s);
    describePdfs(s);
    describeAiMode(s);
    describeOcr(s);
    describeRecordings(s);
    describeDocuments(s);
    describeFileRecords(s);
    describeFilters(s);
    describePaging(s);
    describePreviewLinks(s);
    describeBadInput(s);
    describeSandbox(s);
    describePlans(s);
    // Last: it reads every log line the sections above caused.
    describeLogs(s);
  });
}
