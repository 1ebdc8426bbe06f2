import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * Where every Locus process a test starts leaves its log, for the scan of the whole run
 * (packages/testing/src/log-scan.ts, called by `pnpm test`): no key, token or password may appear in
 * any line. `pnpm test` gives each run a folder of its own (LOCUS_TEST_LOG_DIR); a suite run
 * otherwise (jest alone, a benchmark) writes to the folder above them.
 */
export const TEST_LOG_DIR = process.env.LOCUS_TEST_LOG_DIR ?? join(REPO_ROOT, "test-artifacts/logs");

/** Environment variables whose values are secrets: their values must never reach a log. */
const SECRET_ENV = /SECRET|PASSWORD|TOKEN|API_KEY|ACCESS_KEY/;

/**
 * Opens the log file of one process, beside a list of SHA-256 digests of the secrets it was given
 * (the digests, never the values: the scan hashes each word of each line and looks for them).
 */
function openTestLog(script: string, env: Record<string, string>): (line: string) => void {
  mkdirSync(TEST_LOG_DIR, { recursive: true });
  const name = `${basename(script, ".ts")}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const file = join(TEST_LOG_DIR, `${name}.log`);
  const secrets = Object.entries(env)
    .filter(([k, v]) => SECRET_ENV.test(k) && v.length >= 8)
    .map(([, v]) => createHash("sha256").update(v).digest("hex"));
  writeFileSync(join(TEST_LOG_DIR, `${name}.secrets.json`), JSON.stringify(secrets));
  writeFileSync(file, "");
  return (line) => appendFileSync(file, `${line}\n`);
}

/**
 * Where `pnpm test` built Locus for its run (scripts/test.mjs sets LOCUS_TEST_BUNDLE): when set, the
 * processes tests start (the server, the split launcher, the CLI) run that bundle with plain node,
 * as the image does. A start or a CLI command then costs under half the processor time it costs
 * through tsx (a CLI command, 2.5 s against 6 s on this machine), which on two cores is minutes of
 * every run. Jest run alone, without it, runs the sources through tsx, as `pnpm start` does.
 */
const TEST_BUNDLE = process.env.LOCUS_TEST_BUNDLE;

/** Node's arguments for one of apps/locus's entry points: its bundle when there is one, else tsx. */
export function entryArgs(script: string): string[] {
  const entry = /^apps\/locus\/src\/(main|cli|split)\.ts$/.exec(script)?.[1];
  return TEST_BUNDLE && entry ? [join(TEST_BUNDLE, `${entry}.js`)] : ["--import", "tsx", script];
}

export interface LocusProcess {
  /** Where clients reach Locus: the server, or the gateway of the split shape. */
  baseUrl: string;
  dataDir: string;
  /** Environment for the CLI (and anything else) to reach the same data: empty for the embedded shape. */
  cliEnv: Record<string, string>;
  /** Every line the process has written to stdout and stderr so far. */
  logs: string[];
  child: ChildProcessWithoutNullStreams;
  /** Sends SIGTERM and waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, for recovery tests. */
  kill(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  /** How long the start may take before the process is killed and the start fails (90 s). */
  timeoutMs?: number;
}

export function tempDataDir(prefix = "locus-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts Locus's main entry point (`pnpm start` runs it through tsx; `pnpm test`, its bundle: see
 * entryArgs), on a free port and a data directory of its own, and resolves once it listens.
 */
export function startLocus(options: StartOptions = {}): Promise<LocusProcess> {
  const dataDir = options.dataDir ?? tempDataDir();
  return spawnLocus({
    script: "apps/locus/src/main.ts",
    env: { HOST: "127.0.0.1", PORT: "0", LOCUS_DATA_DIR: dataDir, LOCUS_LOG_LEVEL: "info", ...options.env },
    dataDir,
    cliEnv: {},
    ready: /"url":"(http:\/\/[^"]+)".*"msg":"listening"/,
    // A hang detector, not a speed check: a start takes about 9 s on an idle 2-core machine, and
    // once took over 30 s in a fresh clone's CI run with every e2e suite compiling at once.
    timeoutMs: options.timeoutMs ?? 90_000,
  });
}

/**
 * Spawns a Locus entry point and resolves once a log line matches `ready` (its first group is the
 * base URL clients use).
 */
export function spawnLocus(options: {
  script: string;
  env: Record<string, string>;
  dataDir: string;
  cliEnv: Record<string, string>;
  ready: RegExp;
  timeoutMs: number;
}): Promise<LocusProcess> {
  const { dataDir, cliEnv } = options;
  const child = spawn(process.execPath, entryArgs(options.script), {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
  });
  const logs: string[] = [];
  const writeLog = openTestLog(options.script, options.env);
  let exited = false;
  const exit = new Promise<number | null>((resolveExit) => {
    child.on("exit", (code) => {
      exited = true;
      resolveExit(code);
    });
  });
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`Locus did not start in time:\n${logs.join("\n")}`));
    }, options.timeoutMs);
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        logs.push(line);
        writeLog(line);
        const m = options.ready.exec(line);
        if (m?.[1]) {
          clearTimeout(timer);
          const baseUrl = m[1];
          resolveStart({
            baseUrl,
            dataDir,
            cliEnv,
            logs,
            child,
            stop: async () => {
              if (!exited) child.kill("SIGTERM");
              return exit;
            },
            kill: async () => {
              if (!exited) child.kill("SIGKILL");
              await exit;
            },
          });
        }
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`Locus exited with ${code} before listening:\n${logs.join("\n")}${buffered}`));
    });
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the operator CLI (`pnpm locus ...`) against a data directory. */
export function runCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
  /** What the command reads on standard input (closed at once when not given). */
  input = "",
): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [...entryArgs("apps/locus/src/cli.ts"), ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOCUS_DATA_DIR: dataDir, ...env },
    });
    child.stdin.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => resolveRun({ code, stdout, stderr }));
  });
}

/** Creates a user and a key with the CLI; returns the key (the last line of stdout). */
export async function createUserWithKey(
  dataDir: string,
  options: { email?: string; plan?: string; type?: "live" | "test"; env?: Record<string, string> } = {},
): Promise<{ email: string; key: string; userId: string | undefined }> {
  const email = options.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`;
  const env = options.env ?? {};
  const plan = options.plan ?? "pro";
  const existing = await runCli(dataDir, ["users", "create", "--email", email, "--plan", plan], env);
  if (existing.code !== 0 && !existing.stderr.includes("already exists")) {
    throw new Error(`users create failed: ${existing.stderr}`);
  }
  const created = await runCli(
    dataDir,
    ["keys", "create", "--email", email, "--type", options.type ?? "live"],
    env,
  );
  if (created.code !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  const key = created.stdout.trimEnd().split("\n").at(-1) ?? "";
  // "Created user E (id <uuid>, plan P)"; unknown when the user existed already.
  const userId = /\(id ([0-9a-f-]{36}),/.exec(existing.stdout)?.[1];
  return { email, key, userId };
}
