/**
 * Makes the document retrieval-quality queries (bench/fixtures/documents/queries.json) from real
 * documents, with the truth of every query made apart from Locus's extractors:
 *
 * - Office documents (bench/fixtures/documents/): converted to PDF once by Locus's own converter
 *   (@locus/office-converter, as the document extractor converts them), then read by poppler's
 *   `pdftotext -layout`, one page at a time, counting non-empty lines from the top of the page: the
 *   rule quality-make.ts uses for PDFs. The benchmark checks every truth line against the rendition
 *   the running server stores and serves (its preview link), so a rendition that differs shows.
 * - Text files (packages/text-reader/test/fixtures/): HTML as Chromium shows it
 *   (`document.body.innerText`, lines trimmed, empty ones left out; must equal the `.chromium.txt`
 *   file beside the fixture where there is one); Markdown rendered by cmark-gfm (GitHub's CommonMark,
 *   not the markdown-it Locus uses), then shown by Chromium the same way; plain text as written, its
 *   non-empty lines (`grep -v '^[[:space:]]*$'`).
 *
 * Queries are quality-make's `line` category with a fixed seed: lines with 3+ content words in a
 * seeded order, at most 2 per page of an office rendition (more when fewer than 5 hold text), the 3 words of the line the fewest lines
 * of the document hold, skipped when another line holds all three. Nothing here looks at what
 * Locus finds.
 *
 * Needs (only to make the queries): LibreOffice and poppler-utils (as the server), apt-get (download
 * only) and dpkg-deb for cmark-gfm, and Chromium (/usr/bin/chromium) driven by playwright-core.
 * Run: node --import tsx bench/quality/documents-quality-make.ts
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../harness/paths.ts";
import { OfficeConverter } from "../harness/deps.ts";
import { DOCUMENTS } from "../documents/documents.ts";
import { distinctive, lineFrequencies, lineRefs, pageLines, shuffled, type LineRef } from "./quality-make.ts";
import { tokensOf } from "./quality-truth.ts";
import {
  DOCUMENTS_QUALITY_SEED,
  type DocumentQualityFile,
  type DocumentQualityFixtures,
  type DocumentQualityKind,
  type DocumentQualityQuery,
} from "./documents-quality-truth.ts";

const OFFICE_DIR = join(ROOT, "bench", "fixtures", "documents");
const TEXT_DIR = join(ROOT, "packages", "text-reader", "test", "fixtures");
const OUT = join(OFFICE_DIR, "queries.json");

const QUERIES_PER_FILE = 10;
/**
 * At most this many queries per page, as quality-make's PDFs (2), or more on a document of few
 * pages (QUERIES_PER_FILE over its pages holding text, rounded up): a one-page RTF still gives its 10.
 */
const maxPerPage = (pages: number) => Math.max(2, Math.ceil(QUERIES_PER_FILE / pages));

const OFFICE_KIND: Record<string, DocumentQualityKind> = {
  odt: "writer",
  docx: "writer",
  doc: "writer",
  rtf: "writer",
  pptx: "presentation",
  odp: "presentation",
  xlsx: "spreadsheet",
  xls: "spreadsheet",
};

/** The text fixtures, by format (rickshaw-examples-simple.html is left out: it shows two words). */
const TEXTS: readonly { file: string; format: "plain" | "markdown" | "html" }[] = [
  { file: "base-passwd-README.txt", format: "plain" },
  { file: "git-README.md", format: "markdown" },
  { file: "httplib2-README.md", format: "markdown" },
  { file: "base-passwd-users-and-groups.html", format: "html" },
  { file: "libffi-Memory-Usage.html", format: "html" },
  { file: "rickshaw-examples-index.html", format: "html" },
];

const CMARK = { packages: ["cmark-gfm", "libcmark-gfm0.29.0.gfm.6", "libcmark-gfm-extensions0.29.0.gfm.6"] };

const run = (cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 256 * 1024 ** 2, ...options });

/** Line queries drawn from one document's lines (quality-make's `line` rule). */
function drawQueries(
  file: string,
  kind: DocumentQualityKind,
  refs: readonly LineRef[],
  paged: boolean,
  seed: number,
): DocumentQualityQuery[] {
  const perPageLimit = maxPerPage(new Set(refs.map((r) => r.page)).size);
  const freq = lineFrequencies(refs);
  const tokenSets = refs.map((r) => ({ r, tokens: new Set(tokensOf(r.text)) }));
  const perPage = new Map<number, number>();
  const out: DocumentQualityQuery[] = [];
  for (const ref of shuffled(
    refs.filter((r) => r.words.length >= 3),
    seed,
  )) {
    if (out.length >= QUERIES_PER_FILE) break;
    if (paged && (perPage.get(ref.page) ?? 0) >= perPageLimit) continue;
    const words = distinctive(ref, freq);
    if (tokenSets.some(({ r, tokens }) => r !== ref && words.every((w) => tokens.has(w)))) continue;
    perPage.set(ref.page, (perPage.get(ref.page) ?? 0) + 1);
    out.push({
      id: paged ? `${file}#p${ref.page}l${ref.line}` : `${file}#l${ref.line}`,
      file,
      kind,
      q: words.join(" "),
      page: paged ? ref.page : null,
      line: ref.line,
      text: ref.text.trim(),
    });
  }
  return out.sort((a, b) => (a.page ?? 0) - (b.page ?? 0) || a.line - b.line);
}

/** cmark-gfm from Debian (download only), unpacked; a function rendering Markdown to HTML. */
function cmarkGfm(work: string): { version: string; render: (markdown: string) => string } {
  const dir = join(work, "cmark");
  run("mkdir", ["-p", dir]);
  run("apt-get", ["download", ...CMARK.packages], { cwd: dir });
  for (const deb of readdirSync(dir).filter((f) => f.endsWith(".deb")))
    run("dpkg-deb", ["-x", join(dir, deb), join(dir, "root")]);
  const bin = join(dir, "root", "usr", "bin", "cmark-gfm");
  const env = { ...process.env, LD_LIBRARY_PATH: join(dir, "root", "usr", "lib", "x86_64-linux-gnu") };
  // "cmark-gfm 0.29.0.gfm.6 - CommonMark with GitHub Flavored Markdown converter": its name and version.
  const version = run(bin, ["--version"], { env }).split("\n")[0]!.split(" - ")[0]!.trim();
  return {
    version,
    // Raw HTML kept (--unsafe) as GitHub shows it; GitHub's tables and strikethrough.
    render: (markdown) =>
      execFileSync(bin, ["--unsafe", "-e", "table", "-e", "strikethrough"], {
        input: markdown,
        encoding: "utf8",
        env,
      }),
  };
}

interface Browser {
  newPage(): Promise<{
    route(url: string, handler: (r: RouteLike) => Promise<void>): Promise<void>;
    goto(url: string): Promise<unknown>;
    evaluate<T>(fn: () => T): Promise<T>;
    close(): Promise<void>;
  }>;
  close(): Promise<void>;
  version(): string;
}
interface RouteLike {
  request(): { url(): string };
  continue(): Promise<void>;
  abort(): Promise<void>;
}

/** What Chromium shows of an HTML file: innerText, lines trimmed, empty ones left out (as the fixtures' README). */
async function innerTextLines(browser: Browser, htmlFile: string): Promise<string[]> {
  const page = await browser.newPage();
  try {
    await page.route("**", (r) => (r.request().url().endsWith(".html") ? r.continue() : r.abort()));
    await page.goto(pathToFileURL(htmlFile).href);
    const text = await page.evaluate(
      () => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText,
    );
    return text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "");
  } finally {
    await page.close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "locus-documents-quality-make-"));
  try {
    const converter = new OfficeConverter({ timeoutMs: 180_000, memoryMb: 4096 });
    const checked = await converter.check();
    if (!checked.ok) throw new Error(`LibreOffice cannot run here: ${checked.reason}`);
    const libreOfficeVersion = /LibreOffice\s+(\S+)/.exec(run("soffice", ["--version"]))?.[1] ?? "unknown";
    const files: DocumentQualityFile[] = [];
    const queries: DocumentQualityQuery[] = [];
    let index = 0;

    for (const { file, format } of DOCUMENTS) {
      const bytes = readFileSync(join(OFFICE_DIR, file));
      const pdf = await converter.convertToPdf(bytes, format);
      const pdfPath = join(work, `${file}.pdf`);
      writeFileSync(pdfPath, pdf);
      const pages = pageLines(pdfPath);
      const kind = OFFICE_KIND[format]!;
      files.push({
        name: file,
        path: relative(ROOT, join(OFFICE_DIR, file)),
        kind,
        format,
        bytes: bytes.length,
        pages: pages.length,
        lines: pages.reduce((n, p) => n + p.length, 0),
        truth: `pdftotext -layout of the rendition (LibreOffice ${libreOfficeVersion} through @locus/office-converter), non-empty lines from the top of each page`,
      });
      const drawn = drawQueries(file, kind, lineRefs(pages), true, DOCUMENTS_QUALITY_SEED + index++);
      queries.push(...drawn);
      console.log(`${file}: ${pages.length} pages, ${drawn.length} queries`);
    }

    const cmark = cmarkGfm(work);
    const requireFromApp = createRequire(join(ROOT, "apps", "locus", "package.json"));
    const { chromium } = requireFromApp("playwright-core") as {
      chromium: { launch(o: { executablePath: string; args: string[] }): Promise<Browser> };
    };
    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
    try {
      for (const { file, format } of TEXTS) {
        const path = join(TEXT_DIR, file);
        const raw = readFileSync(path, "utf8");
        let lines: string[];
        let truth: string;
        if (format === "plain") {
          lines = raw
            .split(/\r\n|\r|\n/)
            .map((l) => l.trim())
            .filter((l) => l !== "");
          truth = "the file's non-empty lines as written (grep -v '^[[:space:]]*$')";
        } else if (format === "markdown") {
          const html = join(work, `${file}.html`);
          writeFileSync(html, `<!doctype html><meta charset="utf-8"><body>${cmark.render(raw)}</body>`);
          lines = await innerTextLines(browser, html);
          truth = `rendered by ${cmark.version} (Debian's cmark-gfm, not Locus's markdown-it), then Chromium ${browser.version()} innerText, non-empty lines`;
        } else {
          lines = await innerTextLines(browser, path);
          const kept = path.replace(/\.html$/, ".chromium.txt");
          if (existsSync(kept)) {
            const expected = readFileSync(kept, "utf8")
              .split("\n")
              .filter((l) => l !== "");
            if (expected.join("\n") !== lines.join("\n"))
              throw new Error(`${file}: Chromium ${browser.version()} shows other lines than ${kept}`);
          }
          truth = `Chromium ${browser.version()} innerText, non-empty lines (as ${file.replace(/\.html$/, ".chromium.txt")})`;
        }
        files.push({
          name: file,
          path: relative(ROOT, path),
          kind: "text",
          format,
          bytes: Buffer.byteLength(raw),
          pages: null,
          lines: lines.length,
          truth,
        });
        const drawn = drawQueries(file, "text", lineRefs([lines]), false, DOCUMENTS_QUALITY_SEED + index++);
        queries.push(...drawn);
        console.log(`${file}: ${lines.length} lines, ${drawn.length} queries`);
      }
    } finally {
      await browser.close();
    }

    const fixtures: DocumentQualityFixtures = {
      made: "bench/quality/documents-quality-make.ts (do not edit by hand)",
      seed: DOCUMENTS_QUALITY_SEED,
      libreOfficeVersion,
      files,
      queries,
    };
    writeFileSync(OUT, `${JSON.stringify(fixtures, null, 2)}\n`);
    run("npx", ["prettier", "--write", OUT]);
    console.log(`${queries.length} queries in ${relative(ROOT, OUT)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
