/**
 * Checks the hand-written ai-answer questions (bench/fixtures/quality/answers.json) against the
 * manuals themselves, as poppler's `pdftotext -layout` prints them one page at a time (non-empty
 * lines counted from the top of the page from 1, as in bench/quality/quality-make.ts):
 *
 * - every answerable question's truth lines (page, line..lineEnd), whitespace collapsed, are its
 *   `text` split on " / ";
 * - its `answer`'s words (lowercased letter/digit runs; a word cut by a hyphen at a line's end is
 *   joined, and a hyphen inside a word joins its halves on both sides, so "comma-" / "separated"
 *   and "comma-separated" agree) are a run of the page's words that starts on `line` and ends on
 *   `lineEnd`, with a full stop (! ?) or the start of `line` before it and a full stop after it: the
 *   whole sentence, nothing more. The 12 questions kept from ai-questions.json keep their truth
 *   lines unchanged (checked against that file); their sentence need only start within them (it may
 *   start below `line`, and 3 run on past `lineEnd`);
 * - ids are unique; 60 answerable questions, 12+ per manual, 20 of them dev and 40 test (the 12
 *   kept ones test); 20 unanswerable ones, 8 dev and 12 test, with no file.
 *
 * Exits non-zero listing every mismatch. Needs poppler-utils (pdftotext). Run from the repository:
 *   node --import tsx bench/ai/answers-check.ts
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES_DIR } from "../harness/paths.ts";
import type { RawQuestion } from "./ai-answers.ts";
import type { AiQuestion } from "../quality/quality-truth.ts";

const FIXTURES = join(FIXTURES_DIR, "quality");

type Answer = RawQuestion & { id: string };

const pages = new Map<string, string[]>();
/** The non-empty lines of a page, as `pdftotext -layout` lays them out. */
function pageLines(file: string, page: number): string[] {
  const key = `${file}#${page}`;
  if (!pages.has(key))
    pages.set(
      key,
      execFileSync(
        "pdftotext",
        ["-layout", "-f", String(page), "-l", String(page), join(FIXTURES, file), "-"],
        {
          encoding: "utf8",
        },
      )
        .replace(/\f/g, "")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => l.trim().replace(/\s+/g, " ")),
    );
  return pages.get(key)!;
}

/** Lowercased letter/digit runs; a hyphen between two letters or digits joins them. */
const wordsOf = (s: string): string[] =>
  s
    .toLowerCase()
    .replace(/(?<=[\p{L}\p{N}])-(?=[\p{L}\p{N}])/gu, "")
    .match(/[\p{L}\p{N}]+/gu) ?? [];

/** The words of a page from `from` (1-based) on, each with its line; a word cut at a line's end is joined. */
function pageWords(lines: string[], from: number): { word: string; line: number; before: string }[] {
  let joined = "";
  const lineAt: number[] = []; // the line of each character of `joined`
  for (let i = from - 1; i < lines.length; i++) {
    let l = lines[i]!;
    const cut = /\p{L}-$/u.test(l) && /^\p{L}/u.test(lines[i + 1] ?? "");
    if (cut) l = l.slice(0, -1);
    else l += " ";
    joined += l;
    for (let k = 0; k < l.length; k++) lineAt.push(i + 1);
  }
  const out: { word: string; line: number; before: string }[] = [];
  const lower = joined.toLowerCase();
  // Remove in-word hyphens first, keeping each kept character's line.
  let text = "";
  const at: number[] = [];
  for (let k = 0; k < lower.length; k++) {
    const c = lower[k]!;
    if (c === "-" && /[\p{L}\p{N}]/u.test(lower[k - 1] ?? "") && /[\p{L}\p{N}]/u.test(lower[k + 1] ?? ""))
      continue;
    text += c;
    at.push(lineAt[k]!);
  }
  // Each word with what stands between it and the word before (punctuation, spaces).
  let end = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    out.push({ word: m[0], line: at[m.index]!, before: text.slice(end, m.index) });
    end = m.index + m[0].length;
  }
  out.push({ word: "", line: lines.length + 1, before: text.slice(end) });
  return out;
}

function main(): void {
  const { questions } = JSON.parse(readFileSync(join(FIXTURES, "answers.json"), "utf8")) as {
    questions: Answer[];
  };
  const kept = new Map(
    (
      JSON.parse(readFileSync(join(FIXTURES, "ai-questions.json"), "utf8")) as { questions: AiQuestion[] }
    ).questions.map((q) => [q.id.replace(/-ai$/, "-ans"), q]),
  );
  const errors: string[] = [];
  const fail = (q: Answer, why: string) => errors.push(`${q.id}: ${why}`);

  const ids = new Set<string>();
  for (const q of questions) {
    if (ids.has(q.id)) fail(q, "id used twice");
    ids.add(q.id);
    if (q.set !== "dev" && q.set !== "test") fail(q, `set is ${JSON.stringify(q.set)}`);
    if (q.answerable === false) {
      if (q.file !== undefined || q.page !== undefined || q.answer !== undefined)
        fail(q, "unanswerable but has a file");
      if (!q.why) fail(q, "unanswerable without a why");
      continue;
    }
    const { file, page, line, lineEnd, text, answer } = q;
    if (!file || !page || !line || !lineEnd || text === undefined || !answer) {
      fail(q, "answerable without file, page, line, lineEnd, text and answer");
      continue;
    }
    if (q.id !== `${file}#p${page}l${line}-ans`) fail(q, `id should be ${file}#p${page}l${line}-ans`);
    const old = kept.get(q.id);
    if (old) {
      if (q.set !== "test") fail(q, "a kept question is not in test");
      if (
        old.q !== q.q ||
        old.page !== page ||
        old.line !== line ||
        old.lineEnd !== lineEnd ||
        old.text !== text
      )
        fail(q, "differs from ai-questions.json");
    }
    const lines = pageLines(file, page);
    const said = lines.slice(line - 1, lineEnd);
    if (said.length !== lineEnd - line + 1 || said.join(" / ") !== text)
      fail(q, `${file} p${page} l${line}-${lineEnd} says ${JSON.stringify(said.join(" / "))}`);

    const want = wordsOf(answer);
    const have = pageWords(lines, line);
    const at = have.findIndex(
      (_, k) => k + want.length < have.length && want.every((w, j) => have[k + j]!.word === w),
    );
    if (at < 0) {
      fail(q, `answer's words are not a run of p${page} from l${line}`);
      continue;
    }
    const first = have[at]!.line;
    const last = have[at + want.length - 1]!.line;
    if (old ? first > lineEnd : first !== line || last !== lineEnd)
      fail(q, `answer's sentence is at l${first}-${last}, the truth says l${line}-${lineEnd}`);
    // A new question's answer is a whole sentence: a full stop (or ! or ?) or the truth's first line's
    // start comes right before it, and a full stop (or ! or ?) right after it.
    const opens = at === 0 || /[.!?]/.test(have[at]!.before);
    const closes = /[.!?]/.test(have[at + want.length]!.before);
    if (!old && !(opens && closes))
      fail(q, `answer is not a whole sentence (${opens ? "end" : "start"} cut)`);
  }

  const count = (f: (q: Answer) => boolean) => questions.filter(f).length;
  const expect = (what: string, got: number, want: number) => {
    if (got !== want) errors.push(`${what}: ${got}, expected ${want}`);
  };
  const answerable = (q: Answer) => q.answerable !== false;
  expect(
    "answerable dev",
    count((q) => answerable(q) && q.set === "dev"),
    20,
  );
  expect(
    "answerable test",
    count((q) => answerable(q) && q.set === "test"),
    40,
  );
  expect(
    "kept from ai-questions.json",
    count((q) => kept.has(q.id)),
    kept.size,
  );
  expect(
    "unanswerable dev",
    count((q) => !answerable(q) && q.set === "dev"),
    8,
  );
  expect(
    "unanswerable test",
    count((q) => !answerable(q) && q.set === "test"),
    12,
  );
  for (const file of new Set(questions.map((q) => q.file).filter(Boolean)))
    if (count((q) => q.file === file) < 12) errors.push(`${file}: fewer than 12 questions`);

  if (errors.length > 0) {
    console.error(`answers.json: ${errors.length} mismatch(es)\n${errors.map((e) => `  ${e}`).join("\n")}`);
    process.exit(1);
  }
  console.log(
    `answers.json: ${count(answerable)} answerable (${count((q) => answerable(q) && q.set === "dev")} dev), ` +
      `${count((q) => !answerable(q))} unanswerable (${count((q) => !answerable(q) && q.set === "dev")} dev): all match pdftotext`,
  );
}

main();
