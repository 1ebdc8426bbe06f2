import type { DocumentsQualityResult, DocumentsQualityRow, Spread } from "./documents-quality.ts";

/** A Markdown table whose first `left` columns are aligned left, the others right. */
const table = (head: string[], rows: (string | number)[][], left: number) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i < left ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");

const share = (n: number, of: number) => (of === 0 ? "–" : `${n}/${of} (${Math.round((n / of) * 100)}%)`);
const sp = (s: Spread) => (s.n === 0 ? "–" : `${s.median} / ${s.p90} (${s.n})`);
/** The truth of a file's lines, in short (in full in the JSON report, `files[].truth`). */
const TRUTH_LABEL: Record<string, string> = {
  plain: "non-empty lines as written",
  markdown: "cmark-gfm, then Chromium innerText",
  html: "Chromium innerText",
};
const KIND_ORDER = ["writer", "presentation", "spreadsheet", "text"];

const rowCells = (r: DocumentsQualityRow, paged: boolean) => [
  r.queries,
  share(r.hitAt1, r.queries),
  share(r.hitAt5, r.queries),
  r.mrr,
  share(r.found, r.queries),
  paged ? share(r.pageExact, r.queries) : "–",
  sp(r.away),
];
const HEAD = ["queries", "hit@1", "hit@5", "MRR", "found", "page exact", "lines away (median / p90)"];

/** The "Documents retrieval quality (real material)" section of the bench report. */
export function renderDocumentsQuality(d: DocumentsQualityResult, limit: number | null): string[] {
  const out: string[] = [];
  out.push("## Documents retrieval quality (real material)", "");
  out.push(
    "Where search results land on real documents nobody wrote for Locus: the 8 office documents of `bench/fixtures/documents/` " +
      "(Debian packages; provenance in its README) and 6 text files of `packages/text-reader/test/fixtures/` (Debian's own README, " +
      "Markdown READMEs and HTML pages). Queries are the quality benchmark's `line` category: 3 distinctive words of one line, drawn " +
      "with a fixed seed by `bench/quality/documents-quality-make.ts` into `bench/fixtures/documents/queries.json`. Truth, made apart from " +
      `Locus's extractors: for office documents the page and line of the PDF rendition (LibreOffice ${d.libreOfficeVersion} through ` +
      "Locus's converter, read by poppler's `pdftotext -layout`, non-empty lines from the top of the page); for HTML the lines Chromium " +
      "shows (`innerText`); for Markdown the lines Chromium shows of cmark-gfm's rendering (not Locus's markdown-it); for plain text " +
      "the non-empty lines as written. One user per kind; files uploaded one at a time, each waited for until ready, then searched " +
      `${limit === null ? "" : `with limit ${limit}, `}one search at a time.`,
    "",
  );
  out.push(
    table(
      ["file", "kind", "format", "truth", "pages", "lines", "queries"],
      d.files.map((f) => [
        `\`${f.name}\``,
        f.kind,
        f.format,
        TRUTH_LABEL[f.format] ?? "rendition, pdftotext -layout",
        f.pages === null
          ? "–"
          : f.servedPages === f.pages
            ? f.pages
            : `${f.pages} (served: ${f.servedPages})`,
        f.lines,
        f.queries,
      ]),
      4,
    ),
    "",
  );
  const r = d.renditionCheck;
  out.push(
    `Truth against what was indexed: ${r.same}/${r.lines} office truth lines are printed at the same page and line by the rendition ` +
      "the server serves through its preview link (`GET /api/files/{id}/preview-url` → `url`)" +
      `${r.differing.length > 0 ? `; not: ${r.differing.join("; ")}` : ""}. Locators against the truth, whatever the ranking: ` +
      d.locatorCheck
        .map(
          (c) =>
            `${c.kind} ${c.atTheirLine}/${c.lines}${c.not.length > 0 ? ` (not: ${c.not.join("; ")})` : ""}`,
        )
        .join(", ") +
      " truth lines are in a stored passage at their page and line (`GET /api/files/{id}/passages`).",
    "",
  );
  out.push(
    "A result is **right** when it is the right file, the truth's page (office) and `line`..`line_end` holds the truth line. " +
      "hit@k: a right result among the first k; found: anywhere in the results; page exact: the best-ranked result of the right file " +
      "is on the truth's page; lines away: for the best-ranked result of the right file and page, lines from its range to the truth " +
      "line (0 when it holds it).",
    "",
  );
  for (const mode of ["quick", "ai"] as const) {
    const rows = d.rows
      .filter((x) => x.mode === mode)
      .sort((a, b) => KIND_ORDER.indexOf(a.group) - KIND_ORDER.indexOf(b.group));
    if (rows.length === 0) continue;
    out.push(`### ${mode} mode`, "");
    out.push(
      table(
        ["kind", ...HEAD],
        rows.map((x) => [x.group, ...rowCells(x, x.group !== "text")]),
        1,
      ),
      "",
    );
  }
  const kindOf = new Map(d.files.map((f) => [f.name, f.kind]));
  out.push("By file (quick / ai):", "");
  out.push(
    table(
      ["file", "queries", "hit@1 quick", "hit@5 quick", "hit@1 ai", "hit@5 ai"],
      d.files
        .filter((f) => f.queries > 0)
        .map((f) => {
          const of = (mode: string) => d.byFile.find((x) => x.group === f.name && x.mode === mode);
          const q = of("quick");
          const a = of("ai");
          return [
            `\`${f.name}\` (${kindOf.get(f.name)})`,
            f.queries,
            q ? `${q.hitAt1}` : "–",
            q ? `${q.hitAt5}` : "–",
            a ? `${a.hitAt1}` : "–",
            a ? `${a.hitAt5}` : "–",
          ];
        }),
      1,
    ),
    "",
  );
  const none = d.files.filter((f) => f.queries === 0).map((f) => `\`${f.name}\``);
  if (none.length > 0)
    out.push(
      `No line of ${none.join(", ")} has 3 content words (letters only, 4+ letters, not stop words), so the rule draws no query from it.`,
      "",
    );
  out.push(
    `Quick search p50 over these ${d.quickLatencyMs.n} searches: ${d.quickLatencyMs.p50} ms (informational). ` +
      "Every query's rank and best locator are in the JSON report (`documentsQuality.outcomes`).",
    "",
  );
  return out;
}
