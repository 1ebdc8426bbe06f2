import { readdirSync, readFileSync } from "node:fs";
import { findTesseract, TesseractUnavailableError, type OcrEngineKind } from "../src/index.ts";

/**
 * Why the native engine cannot run here, or null when it can. CI installs the tesseract command
 * (.ci/packages.sh), so its suites run there; a machine without it skips them, saying why.
 */
export const NATIVE_MISSING: string | null = (() => {
  try {
    findTesseract();
    return null;
  } catch (err) {
    if (err instanceof TesseractUnavailableError) return err.reason;
    throw err;
  }
})();

export const SKIPPED_NATIVE = `SKIPPED: ${NATIVE_MISSING}; install it (apt-get install tesseract-ocr) to run these`;

/** Both engines, each with the describe to run its suite with: the native one skipped when missing. */
export const ENGINES: { kind: OcrEngineKind; name: string; describe: jest.Describe }[] = [
  { kind: "wasm", name: "wasm engine (tesseract.js)", describe },
  NATIVE_MISSING
    ? { kind: "native", name: `native engine (${SKIPPED_NATIVE})`, describe: describe.skip }
    : { kind: "native", name: "native engine (the tesseract command)", describe },
];

/** The process ids of this process's children running `name` (Linux: read from /proc). */
export function childProcesses(name: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split at the last ")".
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const [state, ppid] = stat
      .slice(close + 2)
      .split(" ")
      .slice(0, 2);
    if (comm === name && Number(ppid) === process.pid && state !== "Z") found.push(Number(entry));
  }
  return found;
}
