import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createUserWithKey,
  makePdf,
  pageWith,
  REPO_ROOT,
  removeDataDir,
  startLocus,
  type LocusProcess,
} from "@locus/testing";
import { createLocusClient, LocusApiError, LocusFileFailedError } from "../src/index.ts";

/**
 * Both SDKs against one real Locus (all-in-one): the TypeScript client here, then the Python
 * client's own unittest suite (clients/python), spawned against the same server.
 */

let locus: LocusProcess;
let apiKey: string;

/** Requests a second a free account may send here: a dashboard sign-up makes free accounts. */
const FREE_RATE_LIMIT = 20;
/**
 * Requests a second a pro account may send here: the rate-limit burst's, low so that the burst
 * outruns the limit however slowly a busy machine serves it (a server starved of CPU once let 46
 * requests through at 20 a second without refusing one).
 */
const PRO_RATE_LIMIT = 4;

/**
 * A new account and a live key for it, made the way a person makes them: signing up on the
 * dashboard's API and creating a key there (a fraction of a second; the CLI takes seconds).
 */
async function signUpWithLiveKey(baseUrl: string): Promise<string> {
  const email = `sdk-${randomBytes(6).toString("hex")}@example.com`;
  const signUp = await fetch(`${baseUrl}/dashboard/api/signup`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery staple" }),
  });
  expect(signUp.status).toBe(201);
  const { csrf } = (await signUp.json()) as { csrf: string };
  const cookie = signUp.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const created = await fetch(`${baseUrl}/dashboard/api/keys`, {
    method: "POST",
    headers: { "Content-Type": "application/json", cookie, "X-CSRF-Token": csrf },
    body: JSON.stringify({ name: "sdk", type: "live" }),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { key: string }).key;
}

beforeAll(async () => {
  locus = await startLocus({
    env: { LOCUS_RATE_LIMIT_FREE: String(FREE_RATE_LIMIT), LOCUS_RATE_LIMIT_PRO: String(PRO_RATE_LIMIT) },
  });
  apiKey = await signUpWithLiveKey(locus.baseUrl);
}, 120_000);

afterAll(async () => {
  if (!locus) return;
  await locus.stop();
  removeDataDir(locus.dataDir);
  // A graceful stop lets the extraction in flight finish first: slow on a loaded runner.
}, 120_000);

describe("the TypeScript client (@locus/client)", () => {
  it("uploads a PDF with progress, waits until it is ready, and finds the passage with its locator", async () => {
    const client = createLocusClient({ baseUrl: locus.baseUrl, apiKey });
    const phrase = "The migratory kestrel returns to the valley every spring.";
    // Random words on the later pages, so the file is larger than a few upload chunks (64 KiB).
    const filler = Array.from({ length: 59 }, () =>
      Array.from({ length: 40 }, () => randomBytes(40).toString("hex")),
    );
    const pdf = await makePdf({ pages: [pageWith(phrase, 12), ...filler] });
    expect(pdf.length).toBeGreaterThan(2 * 64 * 1024);

    const progress: [number, number][] = [];
    const uploaded = await client.upload(new Blob([new Uint8Array(pdf)]), {
      name: "kestrels – spring.pdf",
      metadata: { team: "birds" },
      onProgress: (sent, total) => progress.push([sent, total]),
    });
    expect(uploaded).toMatchObject({ original_name: "kestrels – spring.pdf", file_type: "pdf" });
    expect(["pending", "processing"]).toContain(uploaded.status);
    // One event per chunk, rising to the whole file.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.map(([, total]) => total)).toEqual(progress.map(() => pdf.length));
    expect(progress.map(([sent]) => sent)).toEqual([...progress.map(([sent]) => sent)].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual([pdf.length, pdf.length]);

    const ready = await client.waitUntilReady(uploaded.id, { timeoutMs: 30_000, pollIntervalMs: 200 });
    expect(ready).toMatchObject({
      id: uploaded.id,
      status: "ready",
      page_count: 60,
      metadata: { team: "birds" },
    });

    const found = await client.search("migratory kestrel", { limit: 5, mode: "quick" });
    expect(found.count).toBeGreaterThan(0);
    const [best] = found.results;
    expect(best).toMatchObject({ file_id: uploaded.id, locator: { page: 1 } });
    expect(best!.content).toContain("migratory kestrel");
    expect(best!.locator.line).toBeLessThanOrEqual(12);
    expect(best!.locator.line_end).toBeGreaterThanOrEqual(12);

    // Filters as extra parameters: the metadata condition and a repeated file_id.
    const other = await client.search("kestrel", { metadata: { team: "fish" } });
    expect(other.count).toBe(0);
    const mine = await client.search("kestrel", { file_id: [uploaded.id], metadata: { team: "birds" } });
    expect(mine.results.map((r) => r.file_id)).toContain(uploaded.id);

    const page = await client.listFiles({ limit: 1 });
    expect(page.files.map((f) => f.id)).toEqual([uploaded.id]);

    // The generated client is there too, typed from /openapi.json.
    const { data } = await client.GET("/api/files/{file_id}/preview-url", {
      params: { path: { file_id: uploaded.id } },
    });
    expect((await fetch(data!.url)).status).toBe(200);
  });

  it("throws LocusFileFailedError with the file's error when processing fails", async () => {
    const client = createLocusClient({ baseUrl: locus.baseUrl, apiKey });
    const broken = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(2000)]);
    const uploaded = await client.upload(broken, { name: "broken.pdf" });
    const error = await client
      .waitUntilReady(uploaded.id, { timeoutMs: 30_000, pollIntervalMs: 200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocusFileFailedError);
    expect((error as LocusFileFailedError).error?.code).toBe("pdf_corrupt");
  });

  it("throws LocusApiError with the 422's detail", async () => {
    const client = createLocusClient({ baseUrl: locus.baseUrl, apiKey });
    const error = (await client.search("tea", { limit: 1000 }).catch((e: unknown) => e)) as LocusApiError;
    expect(error).toBeInstanceOf(LocusApiError);
    expect(error.status).toBe(422);
    expect(error.detail).toEqual([
      expect.objectContaining({ loc: ["query", "limit"], type: "less_than_equal" }),
    ]);
  });

  it(`rides out Locus's real rate limit (pro plan, ${PRO_RATE_LIMIT} requests a second here), waiting the Retry-After it sends`, async () => {
    const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    const waits: number[] = [];
    const statuses: number[] = [];
    const client = createLocusClient({
      baseUrl: locus.baseUrl,
      apiKey: key,
      // The burst takes about sent / PRO_RATE_LIMIT seconds; the last requests wait that many times.
      maxRetries: 12,
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        return response;
      },
      onRetry: ({ waitMs }) => waits.push(waitMs),
    });
    const pdf = await makePdf({ pages: [pageWith("A small page for the burst.", 2)] });
    // Five one-second windows' worth and more at once: at least 6 are refused unless the server
    // takes over five seconds to read them.
    const sent = 5 * PRO_RATE_LIMIT + 6;
    const burst = await Promise.all([
      ...Array.from({ length: sent - 2 }, () => client.listFiles({ limit: 5 })),
      ...Array.from({ length: 2 }, (_, i) => client.upload(pdf, { name: `burst-${i}.pdf` })),
    ]);
    expect(burst).toHaveLength(sent);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(6);
    expect(waits.length).toBe(statuses.filter((s) => s === 429).length);
    // Locus's limiter asks for the rest of its one-second window, rounded up: one second.
    expect(new Set(waits)).toEqual(new Set([1000]));

    // Without retries, the refusal itself, with what Locus said.
    const impatient = createLocusClient({ baseUrl: locus.baseUrl, apiKey: key, maxRetries: 0 });
    const refusals = await Promise.all(
      Array.from({ length: sent }, () =>
        impatient.listFiles().then(
          () => null,
          (e: unknown) => e as LocusApiError,
        ),
      ),
    );
    const refused = refusals.find((e) => e !== null);
    expect(refused).toBeInstanceOf(LocusApiError);
    expect(refused).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect(refused!.detail).toMatch(
      `Rate limit exceeded: the pro plan allows ${PRO_RATE_LIMIT} requests per second`,
    );
  });
});

describe("the Python client (clients/python)", () => {
  it("passes its unittest suite against this Locus", async () => {
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn("python3", ["-m", "unittest", "-v"], {
        cwd: join(REPO_ROOT, "clients/python"),
        env: { PATH: process.env.PATH ?? "", LOCUS_URL: locus.baseUrl, LOCUS_API_KEY: apiKey },
      });
      let output = "";
      child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
      child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
      child.on("error", reject);
      child.on("exit", (code) => resolve({ code, output }));
    });
    // The whole output on failure: which test failed, and why.
    expect({ code: run.code, output: run.code === 0 ? "" : run.output }).toEqual({ code: 0, output: "" });
    expect(run.output).toMatch(/^OK$/m);
    expect(run.output).not.toMatch(/skipped/);
    expect(run.output).toMatch(/test_upload_wait_search_list_preview_delete .* ok$/m);
    // Its waits for a file to be ready allow 120 s each (a loaded CI runner extracts slowly).
  }, 300_000);
});

/** A command's exit code and everything it wrote. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...options.env },
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, output }));
  });
}

/** Fails with the command's whole output unless it exited 0; returns the output. */
async function succeeds(
  command: string,
  args: string[],
  options: Parameters<typeof run>[2],
): Promise<string> {
  const result = await run(command, args, options);
  expect({
    command: [command, ...args].join(" "),
    code: result.code,
    output: result.code === 0 ? "" : result.output,
  }).toEqual({
    command: [command, ...args].join(" "),
    code: 0,
    output: "",
  });
  return result.output;
}

/** The first fenced block of `language` in a README: its example, as a user copies it. */
function readmeExample(readme: string, language: string): string {
  const block = new RegExp("```" + language + "\\n([\\s\\S]*?)```").exec(readme)?.[1];
  if (!block) throw new Error(`no \`\`\`${language} block in the README`);
  return block;
}

/**
 * Each client as a user gets it, outside this workspace: the TypeScript one packed (`pnpm pack`,
 * which builds it) and installed from its tarball with npm into a new project, the Python one
 * installed with pip into a new virtual environment. Each runs its README's example against this
 * Locus (its address and key put in place of the README's), with a real PDF as report.pdf.
 */
describe("the clients as a user installs them", () => {
  let work: string;
  const README_URL = "http://127.0.0.1:8080";

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "locus-sdk-install-"));
    const report = await makePdf({
      pages: [pageWith("The quarterly revenue grew by nine percent in the third quarter.", 3)],
    });
    writeFileSync(join(work, "report.pdf"), report);
  });

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("TypeScript: packs, installs from its tarball, type-checks and runs the README's example; require() works too", async () => {
    const packed = join(work, "packed");
    await succeeds("pnpm", ["pack", "--pack-destination", packed], {
      cwd: join(REPO_ROOT, "packages/client"),
    });
    const [tarball] = readdirSync(packed).filter((f) => f.endsWith(".tgz"));
    const project = join(work, "ts-project");
    await succeeds("mkdir", ["-p", project], { cwd: work });
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "user-project", private: true, type: "module" }),
    );
    await succeeds(
      "npm",
      ["install", "--no-audit", "--no-fund", "--loglevel=error", join(packed, tarball!)],
      {
        cwd: project,
      },
    );
    const installed = join(project, "node_modules/@locus/client");
    // Only what a user needs: the built modules, their types, the README and the licence.
    expect(readdirSync(installed).sort()).toEqual(["LICENSE", "README.md", "dist", "package.json"]);

    const example = readmeExample(readFileSync(join(installed, "README.md"), "utf8"), "ts");
    writeFileSync(join(project, "example.ts"), example.replaceAll(README_URL, locus.baseUrl));
    writeFileSync(join(project, "report.pdf"), readFileSync(join(work, "report.pdf")));
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          strict: true,
          // The package's own declarations are checked too, not skipped.
          skipLibCheck: false,
          typeRoots: [join(REPO_ROOT, "node_modules/@types")],
          types: ["node"],
        },
        files: ["example.ts"],
      }),
    );
    await succeeds(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], {
      cwd: project,
    });
    const output = await succeeds(process.execPath, ["example.js"], {
      cwd: project,
      env: { LOCUS_API_KEY: apiKey },
    });
    expect(output).toMatch(/100%/);
    expect(output).toMatch(/quarterly revenue/);

    // CommonJS projects load it with require() (an ES module: Node 20.19 and later).
    const required = await succeeds(
      process.execPath,
      ["-e", 'const { createLocusClient } = require("@locus/client"); console.log(typeof createLocusClient)'],
      { cwd: project },
    );
    expect(required.trim().split("\n").at(-1)).toBe("function");
  }, 300_000);

  it("Python: installs with pip into a new virtual environment and runs the README's example", async () => {
    // A copy of the folder, as a user's checkout or download: pip's build writes beside it.
    const source = join(work, "locus-client-python");
    await succeeds("mkdir", ["-p", source], { cwd: work });
    for (const name of ["pyproject.toml", "README.md", "LICENSE", "locus_client.py"])
      writeFileSync(join(source, name), readFileSync(join(REPO_ROOT, "clients/python", name)));
    const venv = join(work, "venv");
    await succeeds("python3", ["-m", "venv", venv], { cwd: work });
    await succeeds(join(venv, "bin/pip"), ["install", "--quiet", "--disable-pip-version-check", source], {
      cwd: work,
    });

    const example = readmeExample(readFileSync(join(source, "README.md"), "utf8"), "python");
    writeFileSync(
      join(work, "example.py"),
      example.replaceAll(README_URL, locus.baseUrl).replaceAll("sk_live_...", apiKey),
    );
    // Run from elsewhere than the source folder, so the installed module is the one imported.
    const output = await succeeds(join(venv, "bin/python"), ["example.py"], { cwd: work });
    expect(output).toMatch(/100%/);
    expect(output).toMatch(/quarterly revenue/);
    const where = await succeeds(
      join(venv, "bin/python"),
      ["-c", "import locus_client; print(locus_client.__file__)"],
      {
        cwd: work,
      },
    );
    expect(where).toContain(join(venv, "lib"));
  }, 300_000);
});
