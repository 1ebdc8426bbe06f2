import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FileRejectedError } from "@locus/contracts";
import { limitChild, procCpuAvailable, UNLIMITED, type CpuSlots } from "@locus/cpu-scheduler";
import type { OfficeFormat } from "./inspect.ts";

/** The Debian packages LibreOffice is converted with (what .ci/packages.sh installs). */
export const LIBREOFFICE_PACKAGES =
  "libreoffice-core-nogui libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui";

/**
 * A memory limit that LibreOffice 7.4 converts within, measured with `prlimit --as` on small
 * documents of each family (Debian 12, x86-64, 2 cores): at 128 MB its shared libraries fail to
 * map, at 192 MB its threads fail to start; 256-384 MB works; 416-448 MB fails at start every
 * time ("Unspecified Application Error", SIGABRT: something in it sizes a reservation by the
 * limit); 480 MB up to 8 GB works. soffice.bin reserves address space it never touches, so this
 * bounds reservations, not resident memory: 4 GB leaves large documents room without letting one
 * conversion take the machine (LOCUS_CONVERT_MEMORY_MB's default, which allows no less than 512).
 */
export const DEFAULT_OFFICE_MEMORY_MB = 4096;

export interface OfficeConverterOptions {
  /** Default: soffice found on PATH, else /usr/lib/libreoffice/program/soffice. */
  sofficePath?: string;
  /**
   * Processor time the whole conversion may use (LibreOffice's process tree, read from /proc; time
   * spent waiting for a core does not count), with a wall-clock ceiling ten times as long for a
   * hang; wall-clock time where /proc cannot be read. Past it the process group is killed ->
   * conversion_timeout.
   */
  timeoutMs: number;
  /** Where conversions take their turn with the process's other CPU-heavy work (UNLIMITED: at once). */
  cpu?: CpuSlots | undefined;
  /** Address-space limit of the LibreOffice process (see DEFAULT_OFFICE_MEMORY_MB) -> conversion_failed when hit. */
  memoryMb: number;
  /** Where temporary profiles and files go (default os.tmpdir()). */
  workDir?: string;
  /**
   * "auto" (the default): bubblewrap's sandbox where it is installed and works, else an empty
   * network namespace when this machine allows one, else the configuration guard; "config": the
   * configuration guard only (a machine whose namespaces misbehave; the tests of that guard).
   */
  networkIsolation?: "auto" | "config";
}

/**
 * How LibreOffice is kept off the network and away from files: "sandbox", bubblewrap's (an empty
 * network namespace, and a filesystem of /usr, a few files of /etc and the conversion's own
 * folder: a document that links file:///… finds nothing to read); "namespace", an empty network
 * namespace only; "config", its configuration only (every request to a proxy that does not answer).
 */
export type NetworkIsolation = "sandbox" | "namespace" | "config";

const DEBIAN_SOFFICE = "/usr/lib/libreoffice/program/soffice";

/** The PDF export filter of each family: the right one whatever LibreOffice would guess. */
const EXPORT_FILTER: Record<OfficeFormat, string> = {
  docx: "writer_pdf_Export",
  doc: "writer_pdf_Export",
  odt: "writer_pdf_Export",
  rtf: "writer_pdf_Export",
  pptx: "impress_pdf_Export",
  ppt: "impress_pdf_Export",
  odp: "impress_pdf_Export",
  xlsx: "calc_pdf_Export",
  xls: "calc_pdf_Export",
  ods: "calc_pdf_Export",
};

const fuse = (path: string, name: string, value: string) =>
  `<item oor:path="${path}"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`;

/**
 * The profile each conversion starts with. Macros: security level 3 ("very high": only macros
 * from trusted locations, of which there are none) and macro execution disabled outright. Links:
 * Writer (0) and Calc (1) never update links on load, and links whose referer is untrusted are
 * blocked. Network, for when no namespace is available: every protocol goes through a proxy at
 * 0.0.0.0:9, where nothing answers (a linked image from any host, loopback included, fails at
 * once). No update checks, no document recovery, no autosave.
 */
const REGISTRY_MODIFICATIONS = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
${[
  fuse("/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "3"),
  fuse("/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "true"),
  fuse("/org.openoffice.Office.Common/Security/Scripting", "BlockUntrustedRefererLinks", "true"),
  fuse("/org.openoffice.Office.Writer/Content/Update", "Link", "0"),
  fuse("/org.openoffice.Office.Calc/Content/Update", "Link", "1"),
  fuse(
    "/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments",
    "AutoCheckEnabled",
    "false",
  ),
  fuse("/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "false"),
  fuse("/org.openoffice.Office.Recovery/AutoSave", "Enabled", "false"),
  fuse("/org.openoffice.Inet/Settings", "ooInetProxyType", "1"),
  fuse("/org.openoffice.Inet/Settings", "ooInetNoProxy", ""),
  ...["HTTP", "HTTPS", "FTP"].flatMap((protocol) => [
    fuse("/org.openoffice.Inet/Settings", `ooInet${protocol}ProxyName`, "0.0.0.0"),
    fuse("/org.openoffice.Inet/Settings", `ooInet${protocol}ProxyPort`, "9"),
  ]),
].join("\n")}
</oor:items>
`;

/** A program's absolute path if it is on PATH and executable. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (!dir.startsWith("/")) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      continue;
    }
  }
  return undefined;
}

/** How long a failed check() is believed before LibreOffice is looked for again. */
const RECHECK_AFTER_FAILURE_MS = 60_000;

const unavailable = (reason: string) =>
  new FileRejectedError(
    "converter_unavailable",
    `Office documents cannot be converted to PDF here: ${reason} Until an administrator does, save the document as PDF and upload that.`,
  );

/** The wall-clock ceiling of a conversion, as a multiple of its processor budget (see timeoutMs). */
const WALL_PER_CPU = 10;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Stopped for its time limit: processor time used, or wall-clock time passed (a hang). */
  timedOut: "processor" | "wall" | false;
  /** Its standard output and error, the first 16 KB. */
  output: string;
}

/** Converts office documents to PDF, each in a LibreOffice process of its own. */
export class OfficeConverter {
  private readonly soffice: string;
  private readonly workDir: string;
  /** util-linux's prlimit, which sets the address-space limit before LibreOffice starts. */
  private readonly prlimit = onPath("prlimit") ?? "/usr/bin/prlimit";
  private checked: Promise<{ ok: true; version: string } | { ok: false; reason: string }> | undefined;
  /** When the last check found LibreOffice unable to run. */
  private failedAt: number | undefined;
  private isolation: { prefix: string[]; kind: NetworkIsolation } | undefined;

  constructor(private readonly options: OfficeConverterOptions) {
    this.soffice = options.sofficePath ?? onPath("soffice") ?? DEBIAN_SOFFICE;
    this.workDir = options.workDir ?? tmpdir();
  }

  /** Which guard keeps LibreOffice off the network; known after check(). */
  get networkIsolation(): NetworkIsolation | undefined {
    return this.isolation?.kind;
  }

  /**
   * Whether LibreOffice can run here; the reason (what to install) when not. A success is kept; a
   * failure for a minute only, so that LibreOffice installed (or a limit raised) while Locus runs
   * is used without a restart.
   */
  check(): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
    if (
      !this.checked ||
      (this.failedAt !== undefined && Date.now() - this.failedAt > RECHECK_AFTER_FAILURE_MS)
    ) {
      this.failedAt = undefined;
      const checked = this.probe();
      this.checked = checked;
      void checked.then((answer) => {
        if (!answer.ok && this.checked === checked) this.failedAt = Date.now();
      });
    }
    return this.checked;
  }

  private async probe(): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
    try {
      accessSync(this.soffice, constants.X_OK);
    } catch {
      return {
        ok: false,
        reason: `LibreOffice is not installed (no ${this.soffice}); install the Debian packages ${LIBREOFFICE_PACKAGES}.`,
      };
    }
    this.isolation =
      this.options.networkIsolation === "config"
        ? { prefix: [], kind: "config" }
        : isolationFor(this.workDir);
    const scratch = await this.scratchDir();
    try {
      const run = await this.run(["--version"], scratch, Math.max(this.options.timeoutMs, 30_000));
      const version = /LibreOffice\s+(\d+(?:\.\d+)+)/.exec(run.output)?.[1];
      if (!version) {
        // Run under the same memory limit as a conversion: a limit too low for LibreOffice to
        // start is the machine's configuration to fix, not every document's failure.
        return {
          ok: false,
          reason: `LibreOffice did not start within its memory limit of ${this.options.memoryMb} MB (${describeExit(run)}${run.output ? `: ${lastLines(run.output)}` : ""}); it needs 512 MB at least, ${DEFAULT_OFFICE_MEMORY_MB} MB is the tested default.`,
        };
      }
      return { ok: true, version };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Converts in a separate LibreOffice process: its own fresh profile directory (deleted after),
   * macros never run, no network access, the time and memory limits of the options.
   */
  async convertToPdf(bytes: Uint8Array, format: OfficeFormat, owner = ""): Promise<Buffer> {
    const checked = await this.check();
    if (!checked.ok) throw unavailable(checked.reason);
    const scratch = await this.scratchDir();
    try {
      const input = join(scratch, `document.${format}`);
      const outDir = join(scratch, "out");
      await writeFile(input, bytes, { mode: 0o600 });
      const run = await (this.options.cpu ?? UNLIMITED).run(owner, () =>
        this.run(
          [`--convert-to`, `pdf:${EXPORT_FILTER[format]}`, "--outdir", outDir, input],
          scratch,
          this.options.timeoutMs,
        ),
      );
      if (run.timedOut) {
        const seconds = Math.round(this.options.timeoutMs / 1000);
        const what =
          run.timedOut === "processor"
            ? `used more than ${seconds} seconds of processor time`
            : `took longer than ${seconds * (procCpuAvailable() ? WALL_PER_CPU : 1)} seconds`;
        throw new FileRejectedError(
          "conversion_timeout",
          `Converting this document to PDF ${what} and was stopped. Save it as PDF yourself and upload that, or split it into smaller documents.`,
        );
      }
      const pdf = await readFile(join(outDir, "document.pdf")).catch(() => undefined);
      if (pdf && pdf.length > 0) return pdf;
      // LibreOffice exits 0 when it cannot load a document (damaged, or a password it is not
      // given): any other ending is LibreOffice itself failing, most often its memory limit.
      const crashed = run.signal !== null || run.code !== 0;
      throw new FileRejectedError(
        "conversion_failed",
        crashed
          ? `LibreOffice stopped while converting this document (${describeExit(run)}; it may have needed more than its ${this.options.memoryMb} MB of memory). Save it as PDF yourself and upload that.`
          : "LibreOffice could not open this document to convert it (it may be damaged or protected with a password). Save it as PDF yourself, without a password, and upload that.",
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** A private folder (0700) with a fresh LibreOffice profile in it. */
  private async scratchDir(): Promise<string> {
    const scratch = await mkdtemp(join(this.workDir, "locus-office-"));
    await chmod(scratch, 0o700);
    await mkdir(join(scratch, "profile", "user"), { recursive: true, mode: 0o700 });
    await writeFile(join(scratch, "profile", "user", "registrymodifications.xcu"), REGISTRY_MODIFICATIONS);
    return scratch;
  }

  /**
   * Runs soffice in its own process group (so that the time limit kills LibreOffice's oosplash and
   * soffice.bin together), inside the network namespace when there is one, under the memory limit,
   * and `timeoutMs` of processor time (see OfficeConverterOptions.timeoutMs).
   */
  private run(args: string[], scratch: string, timeoutMs: number): Promise<Run> {
    const prefix = this.isolation?.prefix ?? [];
    const argv = [
      ...(this.isolation?.kind === "sandbox" ? sandboxArgs(prefix, scratch) : prefix),
      this.prlimit,
      `--as=${Math.floor(this.options.memoryMb * 1024 * 1024)}`,
      "--",
      this.soffice,
      `-env:UserInstallation=${pathToFileURL(join(scratch, "profile")).href}`,
      "--headless",
      "--norestore",
      "--nolockcheck",
      "--nodefault",
      "--nologo",
      ...args,
    ];
    return new Promise<Run>((resolve) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd: scratch,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        // HOME in the scratch folder: nothing LibreOffice or its libraries write lands elsewhere.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, LANG: "C.UTF-8", TMPDIR: scratch },
      });
      let output = "";
      const collect = (chunk: Buffer) => {
        if (output.length < 16_384) output += chunk.toString("utf8");
      };
      child.stdout.on("data", collect);
      child.stderr.on("data", collect);
      let timedOut: Run["timedOut"] = false;
      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        } catch {
          // The group has already ended.
        }
      };
      const measured = procCpuAvailable();
      const limit = limitChild(child, { cpuMs: measured ? timeoutMs : Infinity, wallMs: Infinity });
      const timer = setTimeout(
        () => {
          timedOut = "wall";
          killGroup();
        },
        measured ? timeoutMs * WALL_PER_CPU : timeoutMs,
      );
      let finished = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        limit.dispose();
        if (limit.stoppedFor() === "cpu") timedOut = "processor";
        // Whatever LibreOffice left in its group (a soffice.bin outliving oosplash) ends with it.
        // (With none left the kill finds no group: a group's id is reused only once no member lives
        // and the pid space has wrapped around.)
        killGroup();
        resolve({ code, signal, timedOut, output });
      };
      child.on("error", (error) => {
        output += String(error);
        finish(null, null);
      });
      child.on("close", finish);
    });
  }
}

/**
 * What LibreOffice sees of the machine inside bubblewrap: /usr (programs, libraries, fonts), the
 * few files of /etc that it and its libraries read, the font cache, and the conversion's folder,
 * writable. Not the data folder, not other conversions, not /tmp, not the home folders: a document
 * linking a file outside its folder links nothing. Its own network, IPC and process namespaces;
 * bubblewrap dies with its parent, and the process namespace's processes with bubblewrap.
 */
const SANDBOX_ETC = [
  "fonts",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "passwd",
  "group",
  "nsswitch.conf",
  "localtime",
  "libreoffice",
  "alternatives",
];

function sandboxArgs(bwrap: string[], scratch: string): string[] {
  return [
    ...bwrap,
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--die-with-parent",
    "--ro-bind",
    "/usr",
    "/usr",
    // Debian's merged /usr: the top-level folders are links into it.
    ...["bin", "lib", "lib64", "sbin"].flatMap((dir) => ["--symlink", `usr/${dir}`, `/${dir}`]),
    ...SANDBOX_ETC.flatMap((entry) => ["--ro-bind-try", `/etc/${entry}`, `/etc/${entry}`]),
    "--ro-bind-try",
    "/var/cache/fontconfig",
    "/var/cache/fontconfig",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--bind",
    scratch,
    scratch,
    "--chdir",
    scratch,
    "--",
  ];
}

/**
 * The strongest isolation this machine allows, probed once: bubblewrap's sandbox (Debian's
 * `bubblewrap`; it needs user namespaces, or root), else an empty network namespace (as root
 * `unshare --net`, else an unprivileged user namespace with it), else the configuration guard.
 */
function isolationFor(workDir: string): { prefix: string[]; kind: NetworkIsolation } {
  const bwrap = onPath("bwrap");
  if (bwrap) {
    const args = sandboxArgs([bwrap], workDir);
    const probe = spawnSync(args[0]!, [...args.slice(1), "/usr/bin/true"], {
      stdio: "ignore",
      timeout: 5_000,
    });
    if (probe.status === 0) return { prefix: [bwrap], kind: "sandbox" };
  }
  const unshare = onPath("unshare");
  if (unshare) {
    for (const prefix of [
      [unshare, "--net"],
      [unshare, "--net", "--map-root-user"],
    ]) {
      const probe = spawnSync(prefix[0]!, [...prefix.slice(1), "--", "true"], {
        stdio: "ignore",
        timeout: 5_000,
      });
      if (probe.status === 0) return { prefix, kind: "namespace" };
    }
  }
  return { prefix: [], kind: "config" };
}

function describeExit(run: Run): string {
  return run.signal ? `signal ${run.signal}` : `exit code ${run.code}`;
}

function lastLines(text: string): string {
  return text
    .trim()
    .split("\n")
    .filter((line) => !line.includes("javaldx"))
    .slice(-2)
    .join(" / ");
}
