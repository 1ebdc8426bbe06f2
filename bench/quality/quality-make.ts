/**
 * Makes the retrieval-quality fixtures (bench/fixtures/quality/) from real material in Debian
 * packages, and the truth of every query, independently of Locus's own extractors:
 *
 * - PDF manuals from three packages; the truth of each line comes from poppler's
 *   `pdftotext -layout`, one page at a time, counting non-empty lines from the top of the page.
 * - Three of their pages drawn at 150 dpi by poppler's `pdftoppm` (two clean, one turned, noisy
 *   and blurred like a photo, by ffmpeg's filters): the same lines, so the same truth.
 * - Two recordings joined from a real voice's clips (Asterisk's English prompts, recorded by a
 *   person) at offsets set by the construction, so each phrase's start and end are known exactly.
 *
 * Queries follow fixed rules with a fixed seed (see README.md beside the fixtures); nothing here
 * looks at what Locus finds. The questions of ai mode are written by hand
 * (fixtures/quality/ai-questions.json) for lines drawn by the same rules; this script checks that
 * their truth lines say what the file says they say.
 *
 * Needs (only to make the fixtures, not to run the benchmark): apt-get (download only), dpkg,
 * poppler-utils, ffmpeg with libopus, and wamerican (/usr/share/dict/words). Run:
 *   node --import tsx bench/quality/quality-make.ts
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { FIXTURES_DIR } from "../harness/paths.ts";
import { seededRandom } from "../harness/deps.ts";
import {
  QUALITY_SEED,
  tokensOf,
  type AiQuestion,
  type DocumentQuery,
  type QualityFixtures,
  type SpeechQuery,
  type FixtureFile,
} from "./quality-truth.ts";

const FIXTURES = join(FIXTURES_DIR, "quality");
const DICTIONARY = "/usr/share/dict/words";

interface PdfSource {
  out: string;
  pkg: string;
  version: string;
  path: string;
  licence: string;
}

const PDFS: PdfSource[] = [
  {
    out: "fontconfig-user.pdf",
    pkg: "fontconfig",
    version: "2.14.1-4",
    path: "usr/share/doc/fontconfig/fontconfig-user.pdf.gz",
    licence: "MIT-style (fontconfig's licence), © Keith Packard and others",
  },
  {
    out: "libtasn1.pdf",
    pkg: "libtasn1-doc",
    version: "4.19.0-2+deb12u1",
    path: "usr/share/doc/libtasn1-doc/libtasn1.pdf",
    licence: "GFDL-1.3+ (the manual), © Free Software Foundation",
  },
  {
    out: "flite.pdf",
    pkg: "flite",
    version: "2.2-5",
    path: "usr/share/doc/flite/flite.pdf.gz",
    licence:
      "the manual's permission notice (verbatim copies allowed; doc/flite.texi), © 2001-2005 Carnegie Mellon University",
  },
];

/** Pages drawn as images: the page of each PDF with the most candidate lines (see pickImagePage). */
const IMAGE_STYLES = [
  { from: "fontconfig-user.pdf", out: "fontconfig-user-page.png", style: "clean" as const },
  { from: "libtasn1.pdf", out: "libtasn1-page-photo.jpg", style: "photo" as const },
  { from: "flite.pdf", out: "flite-page.png", style: "clean" as const },
];

const ASTERISK = {
  version: "1.6.1-1",
  licence:
    "CC-BY-SA-3.0, recorded by Allison Smith (theivrvoice.com) for Digium's Asterisk core sounds; the joined recordings are under CC-BY-SA-3.0 too",
  clips: "usr/share/asterisk/sounds/en_US_f_Allison",
  transcripts: "usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz",
};

/** Two recordings: phrases, the silence before the first, between phrases and after the last. */
const RECORDINGS = [
  { out: "asterisk-prompts-wide.ogg", phrases: 12, leadS: 1, gapS: 2, tailS: 1 },
  { out: "asterisk-prompts-tight.ogg", phrases: 12, leadS: 0.5, gapS: 0.5, tailS: 1 },
];

const LINE_QUERIES_PER_PDF = 12;
const LINE_QUERIES_PER_IMAGE = 5;
const SAMPLE_RATE = 16_000;

export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const run = (cmd: string, args: string[], options: { cwd?: string } = {}): string =>
  execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 256 * 1024 ** 2, ...options });
const runBytes = (cmd: string, args: string[]): Buffer =>
  execFileSync(cmd, args, { maxBuffer: 256 * 1024 ** 2, stdio: ["ignore", "pipe", "ignore"] });

/** Downloads a Debian package (the pinned version, else the candidate) and unpacks it; returns its root and version. */
function unpack(work: string, pkg: string, version: string): { root: string; version: string } {
  const dir = join(work, pkg);
  run("mkdir", ["-p", dir]);
  try {
    run("apt-get", ["download", `${pkg}=${version}`], { cwd: dir });
  } catch {
    run("apt-get", ["download", pkg], { cwd: dir });
  }
  const deb = readdirSync(dir).find((f) => f.endsWith(".deb"));
  if (!deb) throw new Error(`apt-get download ${pkg} left no .deb`);
  run("dpkg-deb", ["-x", join(dir, deb), join(dir, "root")]);
  const got = run("dpkg-deb", ["-f", join(dir, deb), "Version"]).trim();
  return { root: join(dir, "root"), version: got };
}

// ---------------------------------------------------------------- documents

/** The non-empty lines of each page, as `pdftotext -layout` lays them out. */
export function pageLines(pdf: string): string[][] {
  const info = run("pdfinfo", [pdf]);
  const pages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? "0");
  return Array.from({ length: pages }, (_, i) =>
    run("pdftotext", ["-layout", "-f", String(i + 1), "-l", String(i + 1), pdf, "-"])
      .replace(/\f/g, "")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => l.trimEnd()),
  );
}

const STOP = new Set(
  `about above after again against also among another any are because been before being below
between both but by can cannot could did does doing done down during each either else even ever
every few for from further had has have having here hers how however into its itself just least
less more most much must neither nor not now off once one only onto other others our ours out
over own same several shall she should since some such than that the their theirs them then there
these they this those though through thus too under until upon very was were what when where
whether which while who whom whose why will with within without would you your yours used using
use may also well like make makes made many need needs first second way ways see set sets all`
    .split(/\s+/)
    .filter(Boolean),
);

/** A line's words a person would type: whitespace-separated, purely alphabetic, 4+ letters, not stop words. */
function contentWords(line: string): string[] {
  return line
    .split(/\s+/)
    .map((t) => t.replace(/^[("'“‘[{]+|[)"'”’\]},.;:!?]+$/g, ""))
    .filter((t) => /^[A-Za-z]{4,}$/.test(t))
    .map((t) => t.toLowerCase())
    .filter((t) => !STOP.has(t));
}

export interface LineRef {
  page: number;
  line: number;
  text: string;
  words: string[];
}

/** The last whitespace token of a line when it is an alphabetic word cut by a hyphen ("configura-"). */
const brokenHead = (line: string): string | null =>
  /(?:^|\s)[("'“‘]?([A-Za-z]*[a-z])-$/.exec(line.trimEnd())?.[1] ?? null;
/** The first token of a line when it continues a cut word: lowercase letters. */
const brokenTail = (line: string): string | null => /^\s*([a-z]+)/.exec(line)?.[1] ?? null;

/** Every line of a document, with its content words less the halves of words cut at its ends. */
export function lineRefs(pages: string[][]): LineRef[] {
  const out: LineRef[] = [];
  pages.forEach((lines, p) =>
    lines.forEach((text, i) => {
      // Halves of words cut at a line's end, in any case ("OP-" / "TIONAL"), are not words to query.
      let words = contentWords(text);
      const head = /([A-Za-z]+)-$/.exec(text.trimEnd())?.[1];
      if (head !== undefined) words = words.filter((w) => w !== head.toLowerCase());
      const prev = i > 0 ? lines[i - 1]! : "";
      const tail = /[A-Za-z]-$/.test(prev.trimEnd()) ? /^\s*\W*([A-Za-z]+)/.exec(text)?.[1] : undefined;
      if (tail !== undefined) words = words.filter((w) => w !== tail.toLowerCase());
      out.push({ page: p + 1, line: i + 1, text, words: [...new Set(words)] });
    }),
  );
  return out;
}

/** The 3 words of a line that the fewest lines of the document hold, in the line's order. */
export function distinctive(ref: LineRef, lineFreq: Map<string, number>, n = 3): string[] {
  const ranked = ref.words
    .map((w, i) => ({ w, i, f: lineFreq.get(w) ?? 0 }))
    .sort((a, b) => a.f - b.f || a.i - b.i)
    .slice(0, n);
  return ranked.sort((a, b) => a.i - b.i).map((x) => x.w);
}

export function lineFrequencies(refs: readonly LineRef[]): Map<string, number> {
  const freq = new Map<string, number>();
  for (const r of refs) for (const w of new Set(tokensOf(r.text))) freq.set(w, (freq.get(w) ?? 0) + 1);
  return freq;
}

/**
 * Line queries: lines with 3+ content words, drawn in a seeded order, at most 2 per page of a PDF,
 * whose 3 most distinctive words no other line of the document holds all together.
 */
function lineQueries(
  file: string,
  kind: "pdf" | "image",
  refs: readonly LineRef[],
  all: readonly LineRef[],
  count: number,
  seed: number,
): DocumentQuery[] {
  const freq = lineFrequencies(all);
  const tokenSets = all.map((r) => ({ r, tokens: new Set(tokensOf(r.text)) }));
  const perPage = new Map<number, number>();
  const maxPerPage = kind === "pdf" ? 2 : count;
  const out: DocumentQuery[] = [];
  for (const ref of shuffled(
    refs.filter((r) => r.words.length >= 3),
    seed,
  )) {
    if (out.length >= count) break;
    if ((perPage.get(ref.page) ?? 0) >= maxPerPage) continue;
    const words = distinctive(ref, freq);
    const elsewhere = tokenSets.some(({ r, tokens }) => r !== ref && words.every((w) => tokens.has(w)));
    if (elsewhere) continue;
    perPage.set(ref.page, (perPage.get(ref.page) ?? 0) + 1);
    out.push({
      id: `${file}#p${ref.page}l${ref.line}`,
      file,
      kind,
      category: "line",
      q: words.join(" "),
      page: ref.page,
      line: ref.line,
      lineEnd: ref.line,
      text: ref.text.trim(),
    });
  }
  return out.sort((a, b) => a.page - b.page || a.line - b.line);
}

interface Broken {
  page: number;
  line: number;
  head: string;
  tail: string;
  joined: string;
  text: string;
  next: string;
}

/** Every word a document cuts with a hyphen at a line's end and continues in lowercase on the next line. */
function brokenWords(pages: string[][]): Broken[] {
  const out: Broken[] = [];
  pages.forEach((lines, p) => {
    lines.forEach((text, i) => {
      const head = brokenHead(text);
      if (head === null) return;
      // Continued on the next line, or at a page's end, on the next page's first line that is not its running head.
      let next = lines[i + 1];
      if (next === undefined) next = pages[p + 1]?.find((l, j) => j > 0 && brokenTail(l) !== null);
      if (next === undefined) return;
      const tail = brokenTail(next);
      if (tail === null) return;
      out.push({
        page: p + 1,
        line: i + 1,
        head,
        tail,
        joined: `${head}${tail}`,
        text: text.trim(),
        next: next.trim(),
      });
    });
  });
  return out;
}

/**
 * Hyphen-broken words that are words: the joined form is in the dictionary or printed whole
 * elsewhere in the manuals, and the hyphenated form is printed nowhere inside a line (a real
 * compound such as "run-time" is left out).
 */
function hyphenQueries(
  file: string,
  kind: "pdf" | "image",
  broken: readonly Broken[],
  dictionary: ReadonlySet<string>,
  allText: string,
): { queries: DocumentQuery[]; excluded: string[] } {
  const queries: DocumentQuery[] = [];
  const excluded: string[] = [];
  const lower = allText.toLowerCase();
  for (const b of broken) {
    const joined = b.joined.toLowerCase();
    // A word, not a code or a format ("YYYYMMDDhh-" / "mmss"): at most its first letter is a capital.
    if (!/^[A-Z]?[a-z]+$/.test(b.head)) {
      excluded.push(`${b.head}-${b.tail} (not a word)`);
      continue;
    }
    const compound = new RegExp(`(^|[^a-z])${b.head.toLowerCase()}-${b.tail}([^a-z]|$)`, "m");
    const whole = new RegExp(`(^|[^a-z-])${joined}([^a-z-]|$)`, "m");
    const word = dictionary.has(joined) || whole.test(lower);
    const isCompound = lower.split("\n").some((l) => compound.test(l.trimEnd().replace(/-$/, "")));
    if (!word || isCompound) {
      excluded.push(`${b.head}-${b.tail}${isCompound ? " (compound)" : " (not a word)"}`);
      continue;
    }
    queries.push({
      id: `${file}#p${b.page}l${b.line}-${joined}`,
      file,
      kind,
      category: "hyphen",
      q: joined,
      page: b.page,
      line: b.line,
      lineEnd: b.line,
      text: `${b.text} / ${b.next}`,
      onlyOccurrence: !whole.test(lower.replace(/\n/g, " ")),
    });
  }
  return { queries, excluded };
}

/** The page (after the first) with the most candidate lines: the page drawn as an image. */
function pickImagePage(refs: readonly LineRef[]): number {
  const counts = new Map<number, number>();
  for (const r of refs)
    if (r.page > 1 && r.words.length >= 3) counts.set(r.page, (counts.get(r.page) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
}

function drawPage(pdf: string, page: number, out: string, style: "clean" | "photo", work: string): void {
  const base = join(work, `page-${page}`);
  run("pdftoppm", [
    "-r",
    "150",
    "-gray",
    "-png",
    "-f",
    String(page),
    "-l",
    String(page),
    "-singlefile",
    pdf,
    base,
  ]);
  if (style === "clean") {
    run("cp", [`${base}.png`, out]);
    return;
  }
  // Photo-like: turned 1.5°, on a slightly grey sheet, grain and a little blur, JPEG.
  run("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-i",
    `${base}.png`,
    "-vf",
    "format=rgb24,rotate=1.5*PI/180:fillcolor=0xF2F0EA:ow=rotw(1.5*PI/180):oh=roth(1.5*PI/180),noise=alls=10:allf=u,gblur=sigma=0.7,eq=brightness=-0.03:contrast=0.92",
    "-q:v",
    "5",
    out,
  ]);
}

// ---------------------------------------------------------------- speech

interface Clip {
  name: string;
  text: string;
  samples: Int16Array;
}

/** 16 kHz mono PCM of a clip, with its leading and trailing silence (below -40 dB) cut. */
function decodeClip(path: string): Int16Array {
  const pcm = runBytes("ffmpeg", [
    "-v",
    "error",
    "-f",
    "g722",
    "-i",
    path,
    "-af",
    "silenceremove=start_periods=1:start_threshold=-40dB,areverse,silenceremove=start_periods=1:start_threshold=-40dB,areverse",
    "-ar",
    String(SAMPLE_RATE),
    "-ac",
    "1",
    "-f",
    "s16le",
    "-",
  ]);
  return new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
}

function wav(samples: Int16Array): Buffer {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write("WAVE", 8);
  h.write("fmt ", 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(SAMPLE_RATE, 24);
  h.writeUInt32LE(SAMPLE_RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const speechWords = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z' ]+/g, " ")
    .split(/\s+/)
    .filter(Boolean);

/**
 * Phrases of 4 to 9 words, letters only, drawn in a seeded order, each sharing no content word
 * with those drawn before it (so a query names one phrase).
 */
function pickPhrases(transcripts: Map<string, string>, clipDir: string, count: number): Clip[] {
  const candidates = [...transcripts.entries()].filter(([name, text]) => {
    const n = text.split(/\s+/).length;
    return (
      n >= 4 &&
      n <= 9 &&
      /^[A-Za-z ,.'?!]+$/.test(text) &&
      !text.includes("..") &&
      existsSync(join(clipDir, `${name}.g722`))
    );
  });
  const used = new Set<string>();
  const picked: Clip[] = [];
  for (const [name, text] of shuffled(
    candidates.sort((a, b) => a[0].localeCompare(b[0])),
    QUALITY_SEED,
  )) {
    if (picked.length >= count) break;
    const content = speechWords(text).filter((w) => /^[a-z]{3,}$/.test(w) && !STOP.has(w));
    if (content.length < 2 || content.some((w) => used.has(w))) continue;
    for (const w of content) used.add(w);
    picked.push({ name, text, samples: decodeClip(join(clipDir, `${name}.g722`)) });
  }
  if (picked.length < count) throw new Error(`only ${picked.length} phrases qualify`);
  return picked;
}

function buildRecording(
  clips: readonly Clip[],
  layout: (typeof RECORDINGS)[number],
  work: string,
  wordCounts: Map<string, number>,
): { ogg: Buffer; durationS: number; queries: SpeechQuery[] } {
  const silence = (s: number) => new Int16Array(Math.round(s * SAMPLE_RATE));
  const parts: Int16Array[] = [silence(layout.leadS)];
  let at = parts[0]!.length;
  const queries: SpeechQuery[] = [];
  clips.forEach((clip, i) => {
    if (i > 0) {
      parts.push(silence(layout.gapS));
      at += Math.round(layout.gapS * SAMPLE_RATE);
    }
    const start = at / SAMPLE_RATE;
    const end = (at + clip.samples.length) / SAMPLE_RATE;
    parts.push(clip.samples);
    at += clip.samples.length;
    const words = speechWords(clip.text);
    const content = [...new Set(words.filter((w) => /^[a-z]{3,}$/.test(w) && !STOP.has(w)))];
    const keywords = content
      .map((w, k) => ({ w, k, f: wordCounts.get(w) ?? 0 }))
      .sort((a, b) => a.f - b.f || b.w.length - a.w.length || a.k - b.k)
      .slice(0, 3)
      .sort((a, b) => a.k - b.k)
      .map((x) => x.w);
    const base = {
      file: layout.out,
      start: Math.round(start * 1000) / 1000,
      end: Math.round(end * 1000) / 1000,
      text: clip.text,
      clip: `${clip.name}.g722`,
    };
    queries.push({ ...base, id: `${layout.out}#${clip.name}`, category: "phrase", q: words.join(" ") });
    queries.push({
      ...base,
      id: `${layout.out}#${clip.name}:keywords`,
      category: "keywords",
      q: keywords.join(" "),
    });
  });
  parts.push(silence(layout.tailS));
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Int16Array(total);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  const wavPath = join(work, `${layout.out}.wav`);
  writeFileSync(wavPath, wav(all));
  const oggPath = join(work, layout.out);
  // Bit-exact, with a fixed stream serial: the same bytes every time it is made.
  run("ffmpeg", [
    ...["-v", "error", "-y", "-i", wavPath, "-c:a", "libopus", "-b:a", "32k", "-ac", "1"],
    ...["-fflags", "+bitexact", "-flags:a", "+bitexact", "-serial_offset", "1", oggPath],
  ]);
  return { ogg: readFileSync(oggPath), durationS: total / SAMPLE_RATE, queries };
}

// ---------------------------------------------------------------- main

function main(): void {
  const work = mkdtempSync(join(tmpdir(), "locus-quality-make-"));
  try {
    const dictionary = new Set(
      readFileSync(DICTIONARY, "utf8")
        .split("\n")
        .map((w) => w.trim().toLowerCase())
        .filter(Boolean),
    );
    const files: FixtureFile[] = [];
    const documentQueries: DocumentQuery[] = [];
    const excludedHyphens: Record<string, string[]> = {};
    const pagesOf = new Map<string, string[][]>();

    for (const [i, src] of PDFS.entries()) {
      const { root, version } = unpack(work, src.pkg, src.version);
      const raw = readFileSync(join(root, src.path));
      const pdf = src.path.endsWith(".gz") ? gunzipSync(raw) : raw;
      const out = join(FIXTURES, src.out);
      writeFileSync(out, pdf);
      const pages = pageLines(out);
      pagesOf.set(src.out, pages);
      files.push({
        name: src.out,
        kind: "pdf",
        bytes: pdf.length,
        pages: pages.length,
        source: { package: src.pkg, version, path: `/${src.path}`, licence: src.licence },
      });
      const refs = lineRefs(pages);
      documentQueries.push(
        ...lineQueries(src.out, "pdf", refs, refs, LINE_QUERIES_PER_PDF, QUALITY_SEED + i),
      );
    }
    const allText = [...pagesOf.values()]
      .map((pages) => pages.map((l) => l.join("\n")).join("\n"))
      .join("\n");
    for (const src of PDFS) {
      const { queries, excluded } = hyphenQueries(
        src.out,
        "pdf",
        brokenWords(pagesOf.get(src.out)!),
        dictionary,
        allText,
      );
      documentQueries.push(...queries);
      excludedHyphens[src.out] = excluded;
    }

    for (const [i, img] of IMAGE_STYLES.entries()) {
      const pages = pagesOf.get(img.from)!;
      const refs = lineRefs(pages);
      const page = pickImagePage(refs);
      const out = join(FIXTURES, img.out);
      drawPage(join(FIXTURES, img.from), page, out, img.style, work);
      const src = files.find((f) => f.name === img.from)!.source;
      files.push({
        name: img.out,
        kind: "image",
        bytes: statSync(out).size,
        pages: 1,
        source: src,
        derivedFrom: {
          file: img.from,
          page,
          how:
            img.style === "clean"
              ? "pdftoppm -r 150 -gray, PNG"
              : "pdftoppm -r 150 -gray, then turned 1.5°, grain, blur and JPEG by ffmpeg (photo-like)",
        },
      });
      // On the image, the page is page 1 and its lines are the PDF page's lines.
      const onPage = refs.filter((r) => r.page === page).map((r) => ({ ...r, page: 1 }));
      documentQueries.push(
        ...lineQueries(img.out, "image", onPage, onPage, LINE_QUERIES_PER_IMAGE, QUALITY_SEED + 100 + i),
      );
      const onPageBroken = brokenWords([pages[page - 1]!]).filter((b) => b.page === 1);
      documentQueries.push(...hyphenQueries(img.out, "image", onPageBroken, dictionary, allText).queries);
    }

    // Speech.
    const core = unpack(work, "asterisk-core-sounds-en", ASTERISK.version);
    const g722 = unpack(work, "asterisk-core-sounds-en-g722", ASTERISK.version);
    const transcripts = new Map<string, string>();
    for (const line of gunzipSync(readFileSync(join(core.root, ASTERISK.transcripts)))
      .toString("utf8")
      .split("\n")) {
      const m = /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim());
      if (m) transcripts.set(m[1]!, m[2]!.trim());
    }
    const wordCounts = new Map<string, number>();
    for (const text of transcripts.values())
      for (const w of speechWords(text)) wordCounts.set(w, (wordCounts.get(w) ?? 0) + 1);
    const clipDir = join(g722.root, ASTERISK.clips);
    const phrases = pickPhrases(
      transcripts,
      clipDir,
      RECORDINGS.reduce((n, r) => n + r.phrases, 0),
    );
    const speechQueries: SpeechQuery[] = [];
    let offset = 0;
    for (const layout of RECORDINGS) {
      const clips = phrases.slice(offset, offset + layout.phrases);
      offset += layout.phrases;
      const rec = buildRecording(clips, layout, work, wordCounts);
      writeFileSync(join(FIXTURES, layout.out), rec.ogg);
      files.push({
        name: layout.out,
        kind: "audio",
        bytes: rec.ogg.length,
        durationS: Math.round(rec.durationS * 1000) / 1000,
        source: {
          package: "asterisk-core-sounds-en-g722",
          version: g722.version,
          path: `/${ASTERISK.clips}/*.g722 (transcripts: asterisk-core-sounds-en ${core.version}, /${ASTERISK.transcripts})`,
          licence: ASTERISK.licence,
        },
        derivedFrom: {
          file: clips.map((c) => `${c.name}.g722`).join(", "),
          how:
            `real recordings joined at constructed offsets: each clip decoded to 16 kHz mono, its silence below -40 dB cut at both ends, ` +
            `${layout.leadS} s of silence first, ${layout.gapS} s between clips, ${layout.tailS} s at the end; Ogg/Opus 32 kb/s`,
        },
      });
      speechQueries.push(...rec.queries);
    }

    // ai questions, written by hand: check each truth line against the document.
    const questions = JSON.parse(readFileSync(join(FIXTURES, "ai-questions.json"), "utf8")) as {
      questions: AiQuestion[];
    };
    for (const q of questions.questions) {
      const lines = pagesOf.get(q.file)?.[q.page - 1];
      const said = lines?.slice(q.line - 1, q.lineEnd).map((l) => l.trim());
      if (!said || said.join(" / ") !== q.text)
        throw new Error(
          `ai question "${q.q}": ${q.file} p${q.page} l${q.line}-${q.lineEnd} says ${JSON.stringify(said)}`,
        );
    }

    const fixtures: QualityFixtures = {
      made: "bench/quality/quality-make.ts (do not edit by hand; the questions come from ai-questions.json)",
      seed: QUALITY_SEED,
      files,
      documentQueries,
      speechQueries,
      aiQuestions: questions.questions,
      excludedHyphens,
    };
    writeFileSync(join(FIXTURES, "queries.json"), `${JSON.stringify(fixtures, null, 2)}\n`);
    // As the repository's formatter lays it out, so `prettier --check` passes on a fresh make.
    run("npx", ["prettier", "--write", join(FIXTURES, "queries.json")]);
    const count = (kind: string, category: string) =>
      documentQueries.filter((q) => q.kind === kind && q.category === category).length;
    console.log(
      `pdf: ${count("pdf", "line")} line, ${count("pdf", "hyphen")} hyphen; image: ${count("image", "line")} line, ` +
        `${count("image", "hyphen")} hyphen; speech: ${speechQueries.length / 2} phrases; ai questions: ${questions.questions.length}`,
    );
    for (const f of files) console.log(`  ${f.name}: ${f.bytes} bytes`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// Run as a script; imported (bench/quality/documents-quality-make.ts draws its lines by the same rules), nothing runs.
if (process.argv[1] === fileURLToPath(import.meta.url)) main();
