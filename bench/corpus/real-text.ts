/**
 * Real English text for the ai benchmark's distractor passages: nobody wrote it for Locus, and the
 * word vectors know its words, so it competes with the paraphrase statements by meaning (generated
 * syllable words do not). Every topic, in everyday and technical prose, from pinned Debian packages:
 *
 * - dict-wn: WordNet 3.0's glosses and example sentences, modern plain English on every subject
 *   (money, health, law, housing, weather, animals, cars, work…): the hardest distractors, one
 *   short definition per entry, as close to a one-sentence statement as real text gets.
 * - dict-gcide: the GNU Collaborative International Dictionary of English (Webster's 1913 and
 *   later additions): definitions with quotations from literature, older prose on every subject.
 * - fortunes: fortune-mod's sayings, jokes, anecdotes and quotations: everyday, conversational prose.
 * - gnome-user-docs, debian-reference-en and debian-handbook (English pages only): help for
 *   computer users and administrators, technical prose, code blocks left out.
 *
 * Dictionaries give most of the passages because they are the only large, stable, every-topic
 * English text in Debian main; they are also the hardest distractors there are, a short
 * definition of nearly any word a question uses. WordNet's share is kept below GCIDE's for that
 * reason, and the prose sources give all they have.
 *
 * Each package is fetched once with `apt-get download <pkg>=<version>` (the pinned version, its
 * .deb checked against a SHA-256) and unpacked with `dpkg-deb -x` into bench/.cache/real-text,
 * outside git. The text is cut as Locus's extractors cut pages: an entry (a dictionary entry, a
 * saying, a web page) is laid out in lines, a page holds at most 40, and each page is cut into
 * windows of at most 5 lines and 500 characters (windowLines from @locus/passages). Pages are
 * shuffled with a fixed seed and drawn from the sources in fixed shares, so the same count gives
 * the same passages, byte for byte, on every machine (`realTextDigest` says which).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { CACHE_DIR } from "../harness/paths.ts";
import {
  isStopWord,
  joinWindow,
  seededRandom,
  windowLines,
  words,
  type NumberedLine,
} from "../harness/deps.ts";

const REAL_TEXT_DIR = join(CACHE_DIR, "real-text");

export interface RealTextSource {
  pkg: string;
  version: string;
  /** Of the .deb file that `apt-get download` brings. */
  sha256: string;
  licence: string;
  what: string;
  /** The part of the passages drawn from it while it lasts (shares of the same group add up). */
  group: "wordnet" | "gcide" | "fortunes" | "technical";
}

export const REAL_TEXT_SOURCES: readonly RealTextSource[] = [
  {
    pkg: "dict-wn",
    version: "1:3.0-37",
    sha256: "ed99e0bf162815dc1cc69de3727eedd7112ddf170badf83dbde26209e0724a8c",
    licence: "WordNet 3.0 licence (BSD-like), © 2006 Princeton University",
    what: "WordNet 3.0 glosses and example sentences",
    group: "wordnet",
  },
  {
    pkg: "dict-gcide",
    version: "0.48.5+nmu2",
    sha256: "7b0af5cfde3cbdef5e9d6e78f92ec335ced7c2790f37a40f49bebc6f7347ac0f",
    licence: "GPL-2+ (GCIDE, from Webster's Revised Unabridged Dictionary of 1913 and later additions)",
    what: "GCIDE dictionary definitions and quotations",
    group: "gcide",
  },
  {
    pkg: "fortunes",
    version: "1:1.99.1-7.3",
    sha256: "41d0551dc0ff52f875a2ecef7c39da2f672ab468c37e170119f7e0245a9d63c5",
    licence: "BSD (fortune-mod, © The Regents of the University of California); sayings of many authors",
    what: "fortune-mod sayings, jokes and quotations (all files but ascii-art)",
    group: "fortunes",
  },
  {
    pkg: "debian-reference-en",
    version: "2.100",
    sha256: "9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f",
    licence: "GPL-2+, © 2007-2013 Osamu Aoki",
    what: "Debian Reference (HTML chapters, code blocks left out)",
    group: "technical",
  },
  {
    pkg: "gnome-user-docs",
    version: "43.0-2",
    sha256: "0d635a840747958ca84da778b40d341f1155603851f922c9a171f5a181d6a39f",
    licence: "CC-BY-SA-3.0, © the GNOME Documentation Project",
    what: "GNOME Help and the GNOME system administration guide (English Mallard pages, code blocks left out)",
    group: "technical",
  },
  {
    pkg: "debian-handbook",
    version: "11.20220922",
    sha256: "3d5dbeac1f1afc9c094eab9d0f701f6ecff99c4927d5a4794cf6c85678134faa",
    licence: "GPL-2+ or CC-BY-SA-3.0, © 2003-2015 Raphaël Hertzog and Roland Mas",
    what: "The Debian Administrator's Handbook (en-US HTML pages, code blocks left out)",
    group: "technical",
  },
];

/**
 * The share of passages each group gives while it has pages left (a group that runs out leaves
 * its share to the others): mostly everyday prose, some technical.
 */
const GROUP_SHARES: Record<RealTextSource["group"], number> = {
  wordnet: 0.35,
  gcide: 0.4,
  fortunes: 0.13,
  technical: 0.12,
};

/** Changes whenever the way text is cut changes, so a cache of passages is not reused across. */
export const REAL_TEXT_VERSION = 2;
const SEED = 20_240_611;
const PAGE_LINES = 40;
const WRAP = 90;

/** A distractor passage, with the place it has in its source (a page of 40 lines at most). */
export interface RealPassage {
  content: string;
  /** The package it comes from. */
  source: string;
  /** The page it belongs to, counting across the whole corpus in its drawn order (from 0). */
  page: number;
  line: number;
  lineEnd: number;
}

// ------------------------------------------------------------------ fetching

const run = (cmd: string, args: string[], cwd?: string): string =>
  execFileSync(cmd, args, {
    encoding: "utf8",
    cwd,
    maxBuffer: 64 * 1024 ** 2,
    stdio: ["ignore", "pipe", "pipe"],
  });

/** The unpacked package's root, downloading and unpacking it on first use. */
function unpacked(source: RealTextSource, log: (line: string) => void): string {
  const dir = join(REAL_TEXT_DIR, `${source.pkg}_${source.version.replace(/:/g, "%3a")}`);
  const root = join(dir, "root");
  if (existsSync(join(dir, "unpacked"))) return root;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const command = `apt-get download ${source.pkg}=${source.version}`;
  log(`real text: ${command} (once, into ${dir})`);
  try {
    run("apt-get", ["download", `${source.pkg}=${source.version}`], dir);
  } catch (err) {
    const detail = err instanceof Error && "stderr" in err ? String(err.stderr).trim() : String(err);
    throw new Error(
      `real text: could not download Debian package ${source.pkg} ${source.version} (${source.what}).\n` +
        `  Tried: cd ${dir} && ${command}\n` +
        `  It needs apt-get with Debian bookworm's sources (run 'apt-get update' first); the version is pinned ` +
        `so that every machine indexes the same passages.\n  apt-get said: ${detail.split("\n").slice(-3).join(" | ")}`,
    );
  }
  const deb = readdirSync(dir).find((f) => f.endsWith(".deb"));
  if (!deb) throw new Error(`real text: '${command}' left no .deb in ${dir}`);
  const digest = createHash("sha256")
    .update(readFileSync(join(dir, deb)))
    .digest("hex");
  if (digest !== source.sha256)
    throw new Error(
      `real text: ${deb} has SHA-256 ${digest}, not the pinned ${source.sha256}: not the text the figures were measured on`,
    );
  run("dpkg-deb", ["-x", join(dir, deb), join(dir, "root.tmp")]);
  renameSync(join(dir, "root.tmp"), root);
  rmSync(join(dir, deb));
  writeFileSync(join(dir, "unpacked"), `${source.pkg} ${source.version} ${source.sha256}\n`);
  return root;
}

// ------------------------------------------------------------------ reading

/** A unit of text laid out in lines: a dictionary entry, a saying, a web page. */
interface Unit {
  source: string;
  lines: string[];
}

const clean = (line: string): string => line.replace(/\s+/g, " ").trim();

/** Breaks a paragraph into lines of at most `width` characters, at spaces, as a page lays it out. */
function wrap(paragraph: string, width = WRAP): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of paragraph.split(" ")) {
    if (word === "") continue;
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const b64Number = (s: string): number => [...s].reduce((n, c) => n * 64 + B64.indexOf(c), 0);

/** The definitions of a dictd dictionary, each once, in the data file's order. */
function dictdEntries(root: string, name: string): string[] {
  const data = gunzipSync(readFileSync(join(root, "usr/share/dictd", `${name}.dict.dz`)));
  const index = readFileSync(join(root, "usr/share/dictd", `${name}.index`), "utf8");
  const spans = new Map<number, number>();
  for (const row of index.split("\n")) {
    const [word, offset, length] = row.split("\t");
    if (!word || !offset || !length || word.startsWith("00-database") || word.startsWith("00database"))
      continue;
    spans.set(b64Number(offset), b64Number(length));
  }
  return [...spans.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([offset, length]) => data.subarray(offset, offset + length).toString("utf8"));
}

/** WordNet: the headword and its numbered senses, braces of cross-references dropped; each gloss once. */
function wordnetUnits(root: string, source: string): Unit[] {
  const seen = new Set<string>();
  const units: Unit[] = [];
  for (const entry of dictdEntries(root, "wn")) {
    const lines = entry
      .replace(/[{}]/g, "")
      .split("\n")
      .map(clean)
      .filter((l) => l !== "");
    // Synonyms repeat the same senses under their own headword: keep the first.
    const body = lines.slice(1).join(" ");
    if (lines.length < 2 || seen.has(body)) continue;
    seen.add(body);
    units.push({ source, lines });
  }
  return units;
}

/**
 * A bracketed etymology or inflection note (at most one level of brackets inside), which starts
 * with an abbreviation such as "L. ", "OE., ", "imp. " or "p. p. ": "[L. scopulosus, fr. scopulus a rock]".
 */
const ETYMOLOGY = /\[(?=[A-Za-z]{1,5}\.[ ,])(?:[^[\]]|\[[^[\]]*\])*\]/g;
/** A pronunciation in parentheses, with its stress marks: "(r?s"k?s)". */
const PRONUNCIATION = /\((?=[^()]*")[^()]*\)/g;

/** GCIDE: pronunciations, etymologies, source tags ([1913 Webster]), braces and unknown-glyph marks dropped. */
function gcideUnits(root: string, source: string): Unit[] {
  const units: Unit[] = [];
  for (const entry of dictdEntries(root, "gcide")) {
    const lines = entry
      .replace(/\\[^\\\n]*\\/g, "")
      .replace(ETYMOLOGY, "")
      .replace(PRONUNCIATION, "")
      .replace(/\[[^\]\n]*(?:Webster|WordNet|PJC|Century|JC|RP)[^\]\n]*\]/g, "")
      .replace(/\[root\]/g, "")
      .replace(/\[(ae|oe)\]/g, "$1")
      .replace(/ ,/g, ",")
      .replace(/[{}]/g, "")
      .split("\n")
      .filter((l) => !/^\s*\[[^\]]*\]\s*$/.test(l))
      .map((l) => clean(l.replace(/(^|\s)\?(?=[\s,.;:)\]]|$)/g, "$1")))
      .filter((l) => l !== "");
    if (lines.length < 2) continue;
    units.push({ source, lines });
  }
  return units;
}

/** fortune-mod's files: sayings separated by "%" lines, each a unit. */
function fortuneUnits(root: string, source: string): Unit[] {
  const dir = join(root, "usr/share/games/fortunes");
  const files = readdirSync(dir)
    .filter((f) => !f.includes(".") && f !== "ascii-art")
    .sort();
  return files.flatMap((file) =>
    readFileSync(join(dir, file), "utf8")
      .split(/\n%\n/)
      .map((saying) =>
        saying
          .split("\n")
          .map(clean)
          .filter((l) => l !== "" && l !== "%"),
      )
      .filter((lines) => lines.length > 0)
      .map((lines) => ({ source, lines })),
  );
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  rsquo: "’",
  lsquo: "‘",
  rdquo: "”",
  ldquo: "“",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  copy: "©",
};

const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X"))
      return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });

/**
 * A web page's (or a Mallard help page's) text as a reader sees it: no head, metadata, navigation
 * or code blocks (`pre`, `screen`); blocks on lines of their own, table rows on one line,
 * paragraphs wrapped at 90 characters.
 */
export function htmlLines(html: string): string[] {
  const text = html
    .replace(/<(head|info)[\s>][\s\S]*?<\/\1>/gi, "")
    .replace(/<(script|style|pre|screen)[\s>][\s\S]*?<\/\1>/gi, "\n")
    // Line breaks in the source are spaces to a reader: only blocks start lines.
    .replace(/\s+/g, " ")
    .replace(/<div class="nav(header|footer)">[\s\S]*?<\/div>/gi, "\n")
    .replace(/<ul class="docnav[^"]*">[\s\S]*?<\/ul>/gi, "\n")
    .replace(/<div id="banner">[\s\S]*?<\/div>/gi, "\n")
    .replace(/<p id="title">[\s\S]*?<\/p>/gi, "\n")
    .replace(
      /<\/?(p|div|h[1-6]|li|ul|ol|dl|dt|dd|tr|table|br|hr|blockquote|title|item|list|steps|terms|section|note|desc|page)(\s[^>]*)?\/?>/gi,
      "\n",
    )
    .replace(/<\/t[dh]>/gi, " ")
    .replace(/<[^>]*>/g, "");
  return decodeEntities(text)
    .split("\n")
    .map(clean)
    .filter((l) => l !== "")
    .flatMap((paragraph) => wrap(paragraph));
}

function htmlUnits(root: string, dir: string, source: string, ext = ".html"): Unit[] {
  const full = join(root, dir);
  return readdirSync(full)
    .filter((f) => f.endsWith(ext) && !/^index\b/.test(f))
    .sort()
    .map((f) => ({ source, lines: htmlLines(readFileSync(join(full, f), "utf8")) }))
    .filter((u) => u.lines.length > 0);
}

function unitsOf(source: RealTextSource, root: string): Unit[] {
  switch (source.pkg) {
    case "dict-wn":
      return wordnetUnits(root, source.pkg);
    case "dict-gcide":
      return gcideUnits(root, source.pkg);
    case "fortunes":
      return fortuneUnits(root, source.pkg);
    case "debian-reference-en":
      return htmlUnits(root, "usr/share/debian-reference", source.pkg);
    case "gnome-user-docs":
      return [
        ...htmlUnits(root, "usr/share/help/C/gnome-help", source.pkg, ".page"),
        ...htmlUnits(root, "usr/share/help/C/system-admin-guide", source.pkg, ".page"),
      ];
    case "debian-handbook":
      return htmlUnits(root, "usr/share/doc/debian-handbook/html/en-US", source.pkg);
    default:
      throw new Error(`real text: no reader for ${source.pkg}`);
  }
}

// ------------------------------------------------------------------ cutting and drawing

type Window = { content: string; line: number; lineEnd: number };

/** A unit's pages (40 lines at most), each cut into windows as the extractors cut a page. */
function pagesOf(unit: Unit): Window[][] {
  const pages: Window[][] = [];
  for (let first = 0; first < unit.lines.length; first += PAGE_LINES) {
    const lines: NumberedLine[] = unit.lines
      .slice(first, first + PAGE_LINES)
      .map((text, i) => ({ text, number: i + 1 }));
    pages.push(
      windowLines(lines).map((w) => ({
        content: joinWindow(w),
        line: w[0]?.number ?? 1,
        lineEnd: w.at(-1)?.number ?? 1,
      })),
    );
  }
  return pages;
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

let pool: { passages: RealPassage[]; digest: string } | null = null;

/**
 * Every passage of the corpus in its drawn order: each group's pages shuffled, then a page at a
 * time from a group chosen at random in proportion to its share, among the groups with pages left.
 */
function drawPool(log: (line: string) => void): { passages: RealPassage[]; digest: string } {
  if (pool) return pool;
  const started = performance.now();
  const groups = new Map<RealTextSource["group"], { source: string; page: Window[] }[]>();
  for (const source of REAL_TEXT_SOURCES) {
    const root = unpacked(source, log);
    const pages = unitsOf(source, root).flatMap((u) =>
      pagesOf(u).map((page) => ({ source: u.source, page })),
    );
    groups.set(source.group, [...(groups.get(source.group) ?? []), ...pages]);
  }
  const random = seededRandom(SEED);
  const queues = [...groups.entries()].map(([group, pages]) => ({
    share: GROUP_SHARES[group],
    pages: shuffle(pages, random),
    next: 0,
  }));
  const passages: RealPassage[] = [];
  let page = 0;
  for (;;) {
    const open = queues.filter((q) => q.next < q.pages.length);
    if (open.length === 0) break;
    let r = random() * open.reduce((sum, q) => sum + q.share, 0);
    const queue = open.find((q) => (r -= q.share) < 0) ?? open.at(-1)!;
    const { source, page: windows } = queue.pages[queue.next++]!;
    for (const w of windows)
      passages.push({ content: w.content, source, page, line: w.line, lineEnd: w.lineEnd });
    page += 1;
  }
  const hash = createHash("sha256");
  for (const p of passages) hash.update(`${p.content}\u0000`);
  pool = { passages, digest: hash.digest("hex") };
  const bySource = new Map<string, number>();
  for (const p of passages) bySource.set(p.source, (bySource.get(p.source) ?? 0) + 1);
  log(
    `real text: ${passages.length.toLocaleString("en")} passages (${[...bySource]
      .map(([s, n]) => `${s} ${n.toLocaleString("en")}`)
      .join(", ")}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return pool;
}

/** The first `count` passages of the corpus (fetching the packages on first use). */
export function realTextPassages(count: number, log: (line: string) => void = () => {}): RealPassage[] {
  const { passages } = drawPool(log);
  if (count > passages.length)
    throw new Error(`real text: ${count} passages asked for, the corpus has ${passages.length}`);
  return passages.slice(0, count);
}

/** How many passages the corpus has in all. */
export const realTextAvailable = (log: (line: string) => void = () => {}): number =>
  drawPool(log).passages.length;

/** SHA-256 of the first `count` passages' text: the same on every machine that draws them. */
export function realTextDigest(count: number, log: (line: string) => void = () => {}): string {
  const hash = createHash("sha256");
  for (const p of realTextPassages(count, log)) hash.update(`${p.content}\u0000`);
  return hash.digest("hex");
}

/** What the corpus is made of, for the report. */
export function describeRealText(): string {
  return REAL_TEXT_SOURCES.map((s) => `${s.what} (Debian ${s.pkg} ${s.version}, ${s.licence})`).join("; ");
}

/**
 * Passages as replaceFilePassages takes them, for files of `perFile` passages: each file's pages
 * numbered from 1, lines as on the source page (consecutive windows share a line, as extracted ones do).
 */
export function realTextFiles(
  passages: readonly RealPassage[],
  perFile: number,
): { content: string; locator: { page: number; line: number; line_end: number; source: "text" } }[][] {
  const files: ReturnType<typeof realTextFiles> = [];
  for (let first = 0; first < passages.length; first += perFile) {
    const slice = passages.slice(first, first + perFile);
    const firstPage = slice[0]?.page ?? 0;
    files.push(
      slice.map((p) => ({
        content: p.content,
        locator: { page: p.page - firstPage + 1, line: p.line, line_end: p.lineEnd, source: "text" as const },
      })),
    );
  }
  return files;
}

// ------------------------------------------------------------------ queries

export type RealQueryClass = "common-1" | "common-2" | "common-3" | "rare" | "phrase" | "absent";
const QUERY_CLASSES: readonly RealQueryClass[] = [
  "common-1",
  "common-2",
  "common-3",
  "rare",
  "phrase",
  "absent",
];
const COMMON_RANKS = 400;

/**
 * Keyword queries as people type them, drawn from the passages: 1-3 of the 400 most frequent
 * words (stop words aside), a word of the least frequent 30% (seen at least twice), three
 * consecutive words of a passage, or a word in no passage; classes in equal shares, seeded order.
 */
export function realTextQueries(
  passages: readonly RealPassage[],
  count: number,
  seed: number,
): { cls: RealQueryClass; q: string }[] {
  const counts = new Map<string, number>();
  for (const p of passages)
    for (const w of words(p.content))
      if (!isStopWord(w) && w.length > 2 && !/\d/.test(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const ranked = [...counts.entries()]
    .filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([w]) => w);
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const common = (n: number) => {
    const chosen = new Set<string>();
    while (chosen.size < n) chosen.add(pick(ranked.slice(0, COMMON_RANKS)));
    return [...chosen].join(" ");
  };
  const rare = ranked.slice(Math.floor(ranked.length * 0.7));
  const queries: { cls: RealQueryClass; q: string }[] = [];
  for (let i = 0; i < count; i++) {
    const cls = QUERY_CLASSES[i % QUERY_CLASSES.length]!;
    let q: string;
    if (cls === "common-1") q = common(1);
    else if (cls === "common-2") q = common(2);
    else if (cls === "common-3") q = common(3);
    else if (cls === "rare") q = pick(rare);
    else if (cls === "phrase") {
      let phrase: string[] = [];
      while (phrase.length < 3) {
        const ws = words(pick(passages).content).filter((w) => !/\d/.test(w));
        const start = Math.floor(random() * Math.max(1, ws.length - 2));
        phrase = ws.slice(start, start + 3);
      }
      q = phrase.join(" ");
    } else {
      do q = `zq${Math.floor(random() * 1e9).toString(36)}x`;
      while (counts.has(q));
    }
    queries.push({ cls, q });
  }
  return shuffle(queries, random);
}
