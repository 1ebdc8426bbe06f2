import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./locus-process.ts";

/** Where suites leave the figures `pnpm test:resilience` puts in its report. */
export const RESILIENCE_ARTIFACTS = join(REPO_ROOT, "test-artifacts", "resilience");

/** Writes a suite's figures to test-artifacts/resilience/<name>.json, for the resilience report. */
export function recordResilience(name: string, figures: object): void {
  mkdirSync(RESILIENCE_ARTIFACTS, { recursive: true });
  writeFileSync(join(RESILIENCE_ARTIFACTS, `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
}
