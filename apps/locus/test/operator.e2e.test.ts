import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import {
  client,
  createUserWithKey,
  entryArgs,
  makeTextDocument,
  REPO_ROOT,
  removeDataDir,
  runCli,
  startLocus,
  tempDataDir,
  TEST_AMQP_URL,
  uploadAndWait,
} from "@locus/testing";

/** The operator contract: configuration checked at start, and the CLI. */

/**
 * Starts Locus (`script`: the server, or the split launcher) with `env` and waits for it to stop on
 * its own. Reaching a bad setting takes about 5 s through tsx on an idle machine (it compiles the
 * whole app first) and more than 20 s on a loaded CI runner, so the guard is generous; a process
 * it has to kill resolves with code null.
 */
function startWithEnv(
  env: Record<string, string>,
  script = "apps/locus/src/main.ts",
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, entryArgs(script), {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", LOCUS_DATA_DIR: tempDataDir(), ...env },
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("configuration", () => {
  it("stops with one message naming every bad setting", async () => {
    const { code, stderr } = await startWithEnv({
      PORT: "eighty",
      LOCUS_MAX_UPLOAD_BYTES: "-5",
      LOCUS_TARGETS: "all,mystery",
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^Invalid configuration:/);
    expect(stderr).toMatch(/PORT: must be an integer/);
    expect(stderr).toMatch(/LOCUS_MAX_UPLOAD_BYTES: must be an integer/);
    expect(stderr).toMatch(/LOCUS_TARGETS: unknown target\(s\) mystery/);
  });

  it("refuses to run a single target on embedded pieces, and says what the split shape needs", async () => {
    const { code, stderr } = await startWithEnv({ LOCUS_TARGETS: "gateway" });
    expect(code).toBe(2);
    expect(stderr).toMatch(/every piece must be shared; not LOCUS_BUS=memory \(use rabbitmq\)/);
    expect(stderr).toMatch(/LOCUS_INTERNAL_SECRET: required/);
    expect(stderr).toMatch(/LOCUS_FILES_URL: required/);
  });

  it("stops at start when an OCR language's package is not installed, naming the package", async () => {
    const [{ code, stderr }, bad] = await Promise.all([
      startWithEnv({ PORT: "0", LOCUS_OCR_LANGUAGES: "eng+fra" }),
      startWithEnv({ LOCUS_OCR_LANGUAGES: "english" }),
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /Locus cannot start: OCR language "fra" is not installed: add the npm package @tesseract.js-data\/fra/,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/LOCUS_OCR_LANGUAGES: must be Tesseract language codes joined by "\+"/);
  });

  it("stops at start when a native engine is required but missing, saying what to install or set", async () => {
    const [pdf, ocr] = await Promise.all([
      // No PATH entry holds Poppler's tools.
      startWithEnv({ PORT: "0", LOCUS_PDF_ENGINE: "poppler", PATH: "/nonexistent-bin" }),
      startWithEnv({
        PORT: "0",
        LOCUS_OCR_ENGINE: "native",
        LOCUS_TESSERACT_PATH: "/nonexistent-bin/tesseract",
      }),
    ]);
    expect(pdf.code).toBe(1);
    expect(pdf.stderr).toMatch(
      /Locus cannot start: Invalid configuration:\n {2}- LOCUS_PDF_ENGINE=poppler, but pdftotext, pdfinfo and pdftoppm are not all on the PATH: install poppler-utils/,
    );
    expect(ocr.code).toBe(1);
    expect(ocr.stderr).toMatch(/Locus cannot start: The native OCR engine needs the tesseract command/);
    expect(ocr.stderr).toMatch(/apt-get install tesseract-ocr/);
  });

  it("starts without its speech engine, and says so on the dashboard and in the internal /readyz", async () => {
    const noModel = tempDataDir("locus-no-model-");
    const locus = await startLocus({
      env: { LOCUS_SPEECH_ENGINE: "moonshine", LOCUS_SPEECH_MODEL_DIR: noModel, LOCUS_METRICS_PORT: "0" },
    });
    try {
      const signUp = await fetch(`${locus.baseUrl}/dashboard/api/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "listener@example.com", password: "a long and unusual passphrase" }),
      });
      expect(signUp.status).toBe(201);
      const { notices } = (await signUp.json()) as { notices: string[] };
      expect(notices).toEqual([
        expect.stringMatching(
          /^Recordings cannot be transcribed on this server.*Moonshine.*run pnpm install/,
        ),
      ]);
      // Public: ready, nothing said; internal (the metrics port): the speech engine is degraded.
      expect(await (await fetch(`${locus.baseUrl}/readyz`)).json()).toEqual({ status: "ready" });
      const metricsUrl = /"metricsUrl":"([^"]+)\/metrics"/.exec(locus.logs.join("\n"))?.[1];
      expect(metricsUrl).toBeDefined();
      const internal = (await (await fetch(`${metricsUrl}/readyz`)).json()) as {
        status: string;
        checks: Record<string, string>;
      };
      expect(internal).toMatchObject({ status: "ready", checks: { speech: "degraded" } });
    } finally {
      await locus.stop();
      removeDataDir(locus.dataDir);
      removeDataDir(noModel);
    }
  });

  it("starts without LibreOffice: office documents fail saying what to install, text is still read", async () => {
    const locus = await startLocus({
      env: { LOCUS_SOFFICE_PATH: "/nonexistent-bin/soffice", LOCUS_METRICS_PORT: "0" },
    });
    try {
      const c = client(locus.baseUrl, (await createUserWithKey(locus.dataDir, { plan: "pro" })).key);
      const docx = await uploadAndWait(
        c,
        await makeTextDocument("docx", [["Minutes of the rowing club."]]),
        "minutes.docx",
      );
      expect(docx).toMatchObject({
        status: "failed",
        file_type: "document",
        error: { code: "converter_unavailable" },
      });
      expect(docx.error?.message).toMatch(/libreoffice-core-nogui/);
      const text = await uploadAndWait(
        c,
        Buffer.from("Minutes of the rowing club, as text.\n"),
        "minutes.txt",
      );
      expect(text).toMatchObject({ status: "ready", file_type: "document", mime_type: "text/plain" });
      // Start-up said so, once; the internal /readyz says the converter is degraded.
      const said = locus.logs.filter((line) => line.includes("office documents will fail"));
      expect(said).toHaveLength(1);
      const metricsUrl = /"metricsUrl":"([^"]+)\/metrics"/.exec(locus.logs.join("\n"))?.[1];
      const internal = (await (await fetch(`${metricsUrl}/readyz`)).json()) as {
        checks: Record<string, string>;
      };
      expect(internal.checks.converter).toBe("degraded");
    } finally {
      await locus.stop();
      removeDataDir(locus.dataDir);
    }
  });

  it("pnpm start:split refuses, before starting anything, a split deployment missing a part or scrape-able metrics ports", async () => {
    const launch = (env: Record<string, string>) => startWithEnv(env, "apps/locus/src/split.ts");
    // The README's example without RabbitMQ, S3 and Redis: said in one sentence, nothing started.
    const [missing, movingPorts] = await Promise.all([
      launch({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/locus" }),
      launch({
        DATABASE_URL: "postgres://postgres@127.0.0.1:5432/locus",
        AMQP_URL: "amqp://guest:guest@127.0.0.1:5672",
        S3_BUCKET: "locus",
        REDIS_URL: "redis://127.0.0.1:6379",
        LOCUS_METRICS_PORT: "0",
      }),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /LOCUS_SHAPE=split runs every part on shared infrastructure, but these are not set: AMQP_URL .*, REDIS_URL .*, S3_BUCKET /,
    );
    expect(missing.stderr).not.toMatch(/started with pid/);
    expect(movingPorts.code).toBe(2);
    expect(movingPorts.stderr).toMatch(/LOCUS_METRICS_PORT: 0 would give each process a free port/);
  });

  it("names a missing connection setting for a chosen adapter", async () => {
    const [{ code, stderr }, es] = await Promise.all([
      startWithEnv({ LOCUS_BUS: "rabbitmq", LOCUS_METADATA_STORE: "postgres" }),
      startWithEnv({ LOCUS_SEARCH_INDEX: "elasticsearch", ELASTICSEARCH_USERNAME: "elastic" }),
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/AMQP_URL: required by LOCUS_BUS=rabbitmq/);
    expect(stderr).toMatch(/DATABASE_URL: required/);
    expect(es.code).toBe(2);
    expect(es.stderr).toMatch(/ELASTICSEARCH_URL or ELASTICSEARCH_CLOUD_ID: one is required/);
    expect(es.stderr).toMatch(/ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD: set both or neither/);
  });
});

describe("operator CLI", () => {
  const dataDir = tempDataDir();
  afterAll(() => removeDataDir(dataDir));

  it("creates users once, with a plan", async () => {
    const created = await runCli(dataDir, [
      "users",
      "create",
      "--email",
      "Ops@Example.com",
      "--plan",
      "enterprise",
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/Created user ops@example.com .*plan enterprise/);
    const again = await runCli(dataDir, ["users", "create", "--email", "ops@example.com"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
    const badPlan = await runCli(dataDir, ["users", "create", "--email", "x@example.com", "--plan", "gold"]);
    expect(badPlan.code).toBe(2);
  });

  it("refuses to guess the store when DATABASE_URL is set without LOCUS_METADATA_STORE, and writes nothing", async () => {
    const elsewhere = tempDataDir();
    try {
      const env = { DATABASE_URL: "postgres://locus@127.0.0.1:1/deployment" };
      const refused = await runCli(
        elsewhere,
        ["keys", "create", "--email", "a@example.com", "--type", "live"],
        env,
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/DATABASE_URL is set, .* but LOCUS_METADATA_STORE is not/);
      expect(refused.stderr).toMatch(/LOCUS_METADATA_STORE=postgres/);
      expect(readdirSync(elsewhere)).toEqual([]);
      // Said outright, the data dir's SQLite store is used as before.
      const chosen = await runCli(elsewhere, ["users", "create", "--email", "a@example.com"], {
        ...env,
        LOCUS_METADATA_STORE: "sqlite",
      });
      expect(chosen.code).toBe(0);
    } finally {
      removeDataDir(elsewhere);
    }
  });

  it("refuses the README's split settings for a command that would use an embedded part beside them, and writes nothing", async () => {
    const elsewhere = tempDataDir();
    try {
      // The records named, the bus, files and index left to the embedded defaults.
      const readme = {
        DATABASE_URL: "postgres://locus@127.0.0.1:1/deployment",
        LOCUS_METADATA_STORE: "postgres",
      };
      const fileId = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";
      const [status, retry, rebuild] = await Promise.all([
        runCli(elsewhere, ["status"], readme),
        runCli(elsewhere, ["files", "retry", fileId], readme),
        runCli(elsewhere, ["index", "rebuild"], readme),
      ]);
      for (const refused of [status, retry, rebuild]) {
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/naming a deployment's shared parts, but LOCUS_/);
        expect(refused.stderr).toMatch(/Set LOCUS_SHAPE=split to use every shared part/);
        expect(refused.stdout).toBe("");
      }
      expect(status.stderr).toMatch(/LOCUS_BUS, LOCUS_BLOB_STORE, LOCUS_SEARCH_INDEX are not/);
      expect(retry.stderr).toMatch(/would use an in-process bus of its own/);
      expect(retry.stderr).not.toMatch(/restart/);
      expect(rebuild.stderr).toMatch(/would use the files in .*, the SQLite search index in /);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      removeDataDir(elsewhere);
    }
  });

  it("status ends promptly when RabbitMQ refuses it (a wrong vhost), saying the bus is unavailable", async () => {
    const url = new URL(TEST_AMQP_URL);
    url.pathname = "/no-such-vhost";
    const began = Date.now();
    const status = await runCli(dataDir, ["status"], {
      LOCUS_SHAPE: "embedded",
      LOCUS_BUS: "rabbitmq",
      AMQP_URL: url.toString(),
      LOCUS_CLI_TIMEOUT_S: "30",
    });
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/bus +unavailable: RabbitMQ at .*no-such-vhost is unavailable/);
    expect(status.stdout).toMatch(/Queues: unknown while RabbitMQ cannot be reached/);
    // Ended by itself (the bus's reconnection stopped), well before the deadline.
    expect(status.stderr).not.toMatch(/gave up/);
    expect(Date.now() - began).toBeLessThan(30_000);
  });

  it("stops any command at LOCUS_CLI_TIMEOUT_S, saying what it waited for", async () => {
    // A "database" that lets the client in (authentication ok, ready for query) and then never
    // answers a query: the driver would wait for its 30 s statement timeout, and more.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.once("data", () =>
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49])),
      );
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      const began = Date.now();
      const stuck = await runCli(dataDir, ["users", "create", "--email", "late@example.com"], {
        DATABASE_URL: `postgres://locus:secret@127.0.0.1:${port}/deployment`,
        LOCUS_METADATA_STORE: "postgres",
        LOCUS_CLI_TIMEOUT_S: "3",
      });
      expect(stuck.code).toBe(1);
      expect(stuck.stderr).toMatch(
        new RegExp(
          `pnpm locus users create: gave up after 3 s waiting for PostgreSQL at postgres://127\\.0\\.0\\.1:${port}/deployment`,
        ),
      );
      expect(stuck.stderr).not.toContain("secret");
      expect(Date.now() - began).toBeLessThan(30_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it("says what the embedded shape runs on and which files are stuck or failed; refuses what it cannot do", async () => {
    const status = await runCli(dataDir, ["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /records in sqlite, files in local, messages on memory, passages in sqlite/,
    );
    expect(status.stdout).toMatch(/metadata_store +ok/);
    expect(status.stdout).toMatch(/search_index +ok/);
    expect(status.stdout).toMatch(/Queues: in the server's process/);
    expect(status.stdout).toMatch(/Stalled files .*: 0\n/);
    expect(status.stdout).toMatch(/Failed files: 0\n/);

    const notAnId = await runCli(dataDir, ["files", "retry", "123"]);
    expect(notAnId.code).toBe(2);
    expect(notAnId.stderr).toMatch(/"123" is not a file id/);
    // An id that names no file is its own answer (exit code 3), not a mistake in the command.
    const unknown = await runCli(dataDir, ["files", "retry", "3f2504e0-4f89-11d3-9a0c-0305e82c3301"]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(
      /^No file 3f2504e0-4f89-11d3-9a0c-0305e82c3301 in .*: pnpm locus status lists/,
    );
    expect(unknown.stderr).not.toMatch(/Usage:/);
    const letters = await runCli(dataDir, ["dead-letters", "list"]);
    expect(letters.code).toBe(2);
    expect(letters.stderr).toMatch(/Dead letters are kept by RabbitMQ/);
  });

  it("prints a new key alone on the last line, and lists it without the secret part", async () => {
    const created = await runCli(dataDir, [
      "keys",
      "create",
      "--email",
      "ops@example.com",
      "--type",
      "test",
      "--name",
      "ci",
    ]);
    expect(created.code).toBe(0);
    const lines = created.stdout.trimEnd().split("\n");
    const key = lines.at(-1) ?? "";
    expect(key).toMatch(/^sk_test_[A-Za-z0-9_-]{32}$/);
    const listed = await runCli(dataDir, ["keys", "list", "--email", "ops@example.com"]);
    expect(listed.stdout).toMatch(/ci\s+sk_test_\S{4}…\s+test/);
    expect(listed.stdout).not.toContain(key);
  });

  it("revokes by id and explains mistakes", async () => {
    const created = await runCli(dataDir, ["keys", "create", "--email", "ops@example.com", "--type", "live"]);
    const id = /\(id ([0-9a-f-]{36})\)/.exec(created.stdout)?.[1] ?? "";
    expect((await runCli(dataDir, ["keys", "revoke", id])).code).toBe(0);
    const twice = await runCli(dataDir, ["keys", "revoke", id]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/No active key/);
    expect(
      (await runCli(dataDir, ["keys", "create", "--email", "nobody@example.com", "--type", "live"])).stderr,
    ).toMatch(/No user with email/);
    expect(
      (await runCli(dataDir, ["keys", "create", "--email", "ops@example.com", "--type", "prod"])).code,
    ).toBe(2);
    expect((await runCli(dataDir, ["frobnicate"])).code).toBe(2);
  });

  it("works while the server runs, on the same data", async () => {
    const locus = await startLocus({ dataDir });
    try {
      const created = await runCli(dataDir, [
        "keys",
        "create",
        "--email",
        "ops@example.com",
        "--type",
        "live",
      ]);
      const key = created.stdout.trimEnd().split("\n").at(-1) ?? "";
      const res = await fetch(`${locus.baseUrl}/api/files`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
    } finally {
      await locus.stop();
    }
  });
});
