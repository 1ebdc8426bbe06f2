import type { QualityBenchResult, QualityRow, Spread } from "./quality.ts";

/** A Markdown table whose first `left` columns are aligned left, the others right. */
const table = (head: string[], rows: (string | number)[][], left = 2) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i < left ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");

const share = (n: number, of: number) => (of === 0 ? "–" : `${n}/${of} (${Math.round((n / of) * 100)}%)`);
const sp = (s: Spread, unit: string) => (s.n === 0 ? "–" : `${s.median}${unit} / ${s.p90}${unit} (${s.n})`);

const ORDER = [
  "pdf line",
  "pdf hyphen",
  "pdf hyphen, printed whole nowhere else",
  "pdf question",
  "image line",
  "image hyphen",
  "image hyphen, printed whole nowhere else",
  "audio phrase",
  "audio keywords",
];
const order = (r: QualityRow) => {
  const i = ORDER.indexOf(`${r.kind} ${r.category}`);
  return i < 0 ? ORDER.length : i;
};

/** The "Retrieval quality (real material)" section of the bench report. */
export function renderQuality(q: QualityBenchResult, limit: number | null): string[] {
  const out: string[] = [];
  out.push("## Retrieval quality (real material)", "");
  out.push(
    "Where search results land, on material nobody wrote for the tests (`bench/fixtures/quality/`, provenance and licences in its README): " +
      "three PDF manuals from Debian packages, three of their pages drawn as images at 150 dpi (one turned, grainy and blurred like a photo), " +
      "and two recordings of a real human voice (the Asterisk prompts recorded by Allison Smith) **joined from real clips at constructed offsets**, " +
      "so each phrase's start is known from the construction, not from the recogniser. The truth of every document query comes from poppler's " +
      "`pdftotext -layout` (non-empty lines from the top of the page), never from Locus's extractors; queries follow fixed rules with a fixed seed " +
      "(`bench/quality/quality-make.ts`), and the ai questions were written by hand before any search ran. Each kind is searched as a user of its own " +
      `(the PDFs, the images, the recordings); files are uploaded one at a time in a fixed order, each waited for until ready, and searched ${limit === null ? "" : `with limit ${limit}, `}one search at a time, so the figures do not depend on the machine's speed.`,
    "",
  );
  out.push(
    table(
      ["file", "kind", "size", "from"],
      q.files.map((f) => [
        `\`${f.name}\``,
        f.kind,
        `${Math.round(f.bytes / 1024)} KiB`,
        f.derivedFrom ? `${f.derivedFrom} (${f.source})` : f.source,
      ]),
      4,
    ),
    "",
  );
  out.push(
    "A result is **right** when it is the right file and, for documents and images, the right page with `line`..`line_end` meeting the truth " +
      `line(s); for speech, when its \`timestamp\` is within ${q.toleranceS} s of the phrase's true start. hit@k: a right result among the first k; ` +
      "MRR: mean of 1/rank of the first right result (0 when none); found: a right result anywhere in the results. " +
      '"Lines away" / "s away": for the best-ranked result of the right file (and page), how far its range is from the truth (0 when it ' +
      "meets it; for speech |timestamp − true start|), and its width (`line_end − line + 1`, or `timestamp_end − timestamp`): median / p90 (results).",
    "",
  );
  out.push(
    "Categories: `line`: the 3 words of a line that the fewest lines of its document hold; `hyphen`: a word the document cuts with a hyphen " +
      'at a line\'s end ("configura-" / "tion"), searched whole, truth the line of its first half ("printed whole nowhere else": the ' +
      "joined word appears nowhere else in the manuals, so only the broken place can answer); `question`: a natural-language question " +
      "answered by a sentence of a PDF; `phrase`: every word of a spoken phrase; `keywords`: its (at most) 3 rarest words.",
    "",
  );
  for (const mode of ["quick", "ai"] as const) {
    const rows = q.rows.filter((r) => r.mode === mode).sort((a, b) => order(a) - order(b));
    if (rows.length === 0) continue;
    out.push(`### ${mode} mode`, "");
    out.push(
      table(
        [
          "kind",
          "category",
          "queries",
          "hit@1",
          "hit@5",
          "MRR",
          "found",
          "away (median / p90)",
          "width (median / p90)",
        ],
        rows.map((r) => {
          const unit = r.kind === "audio" ? " s" : "";
          return [
            r.kind,
            r.category,
            r.queries,
            share(r.hitAt1, r.queries),
            share(r.hitAt5, r.queries),
            r.mrr,
            share(r.found, r.queries),
            sp(r.away, unit),
            sp(r.span, unit),
          ];
        }),
      ),
      "",
    );
  }
  out.push(
    "Speech: phrases the recogniser heard right (every word of the query in one passage of the recording, passages gathered by searching " +
      `each word), and among those, the queries whose best result of the recording starts within ${q.toleranceS} s of the phrase:`,
    "",
  );
  out.push(
    table(
      ["query", "mode", "phrases", "heard right", `within ${q.toleranceS} s, of those heard`],
      q.speech.map((s) => [
        s.category,
        s.mode,
        s.phrases,
        share(s.heardRight, s.phrases),
        share(s.hitWithinToleranceAmongHeard, s.heardRight),
      ]),
    ),
    "",
  );
  const o = q.speechOffsetsS;
  if (o.median !== null)
    out.push(
      `Speech results' start minus the phrase's true start (quick, phrase queries, best result of the recording): median ${o.median} s, ` +
        `p10 ${o.p10} s, p90 ${o.p90} s.`,
      "",
    );
  out.push(
    `Hyphen-broken words quick mode did not find at all: ${q.hyphenMissedQuick.length === 0 ? "none" : q.hyphenMissedQuick.join(", ")}.`,
    "",
  );
  // Absent from runs made before the measure existed; null when the server had no passages endpoint.
  if (q.hyphenWholeAtLine === null) {
    out.push(
      "Hyphen-broken words whole at their line: not measured (the server has no passages endpoint).",
      "",
    );
  } else if (q.hyphenWholeAtLine) {
    for (const w of q.hyphenWholeAtLine)
      out.push(
        `Hyphen-broken words stored whole on the line where they begin (${w.kind}): ${w.wholeAtLine}/${w.words}` +
          `${w.missing.length > 0 ? `; not: ${w.missing.join(", ")}` : ""}.`,
        "",
      );
  }
  const spread = q.tenantSpread ?? [];
  if (spread.length > 0) {
    const categories = [...new Set(spread.flatMap((t) => t.rows.map((r) => r.category)))];
    out.push(
      "The same three PDFs and their queries (quick mode) as three users, searched on one index that then holds the PDFs " +
        "three times. Each user's terms are stemmed, then prefixed with a hash of the user's id (until terms were made in " +
        "JavaScript, FTS5 stemmed the prefixed word, so the user alone changed what matched); ranks that differ from the " +
        `first user's would mean the user still does; ${q.fixedUserIds ? "the users have fixed ids, so runs of the same code give the same ranks" : "**the users' ids were random in this run**"}:`,
      "",
    );
    out.push(
      table(
        [
          "user",
          "id",
          ...categories.map((c) => `${c}: hit@1 / hit@5 / found`),
          "ranks unlike the first user's",
        ],
        spread.map((t) => [
          t.tenant,
          `\`${t.userId.slice(0, 8)}…\``,
          ...categories.map((c) => {
            const r = t.rows.find((x) => x.category === c);
            return r ? `${r.hitAt1} / ${r.hitAt5} / ${r.found} of ${r.queries}` : "–";
          }),
          t.tenant === spread[0]!.tenant ? "–" : t.ranksDifferingFromFirst,
        ]),
      ),
      "",
    );
  }
  for (const mode of ["quick", "ai"] as const) {
    const missed = q.aiQuestionsMissedAt5[mode];
    if (missed.length > 0)
      out.push(`Questions missed in the top 5, ${mode}: ${missed.map((m) => `"${m}"`).join("; ")}.`, "");
  }
  out.push(
    `Quick search p50 over these ${q.quickLatencyMs.n} searches: ${q.quickLatencyMs.p50} ms (informational). ` +
      "Every query's rank and best locator are in the JSON report (`quality.outcomes`).",
    "",
  );
  return out;
}
