// @ts-check
// The search playground: a query in either mode with its filters, kept in the URL (a reload or a
// shared link runs it again), its results grouped by file with their matched words, a page at a
// time, the same search as a curl command to copy, and an ai answer whose citation markers open the
// cited place.
import { search } from "./api.js";
import { describeLocator, withMarks } from "./format.js";
import { openPreview } from "./preview.js";
import { hashParams, showInUrl } from "./router.js";
import { errorBox, h, say, showError, view } from "./ui.js";

/** @typedef {import("@locus/contracts").SearchResponseDto} SearchResponseDto */
/** @typedef {import("@locus/contracts").SearchResultDto} SearchResultDto */

/** How many results a page asks for, unless the page says otherwise. */
const DEFAULT_LIMIT = "20";
const LIMITS = ["10", "20", "50", "100"];
const MODES = ["quick", "ai"];
const FILE_TYPES = ["pdf", "image", "audio", "video", "document"];
const METADATA_PREFIX = "metadata.";

/**
 * A metadata filter as typed ("team=finance, year=2024") as its query parameters, or null when a
 * condition is not `key=value`.
 * @param {string} text
 * @returns {[string, string][] | null}
 */
export function metadataConditions(text) {
  /** @type {[string, string][]} */
  const conditions = [];
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const at = part.indexOf("=");
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (at < 0 || key === "" || value === "") return null;
    conditions.push([`${METADATA_PREFIX}${key}`, value]);
  }
  return conditions;
}

/**
 * The API call for a search, as a shell command: the key as the variable $LOCUS_API_KEY (never the
 * user's real key, which this page does not have), the URL single-quoted (its query is
 * percent-encoded, so it holds no quote).
 * @param {URLSearchParams} params
 */
export function curlCommand(params) {
  const url = `${location.origin}/api/search?${params}`;
  return `curl -s -H "Authorization: Bearer $LOCUS_API_KEY" '${url}'`;
}

export function searchView() {
  const error = errorBox();
  const q = h("input", { id: "q", name: "q", type: "search", required: true, maxlength: "1000" });
  const mode = h(
    "select",
    { id: "mode", name: "mode" },
    h("option", { value: "quick" }, "Quick: keywords (BM25)"),
    h("option", { value: "ai" }, "AI: meaning, with a cited summary"),
  );
  const limit = h(
    "select",
    { id: "limit", name: "limit" },
    ...LIMITS.map((n) => h("option", { value: n }, `${n} results a page`)),
  );
  limit.value = DEFAULT_LIMIT;
  const fileType = h(
    "select",
    { id: "file-type", name: "file_type" },
    h("option", { value: "" }, "Any kind"),
    ...FILE_TYPES.map((t) => h("option", { value: t }, t)),
  );
  const after = h("input", { id: "created-after", name: "created_after", type: "date" });
  const before = h("input", { id: "created-before", name: "created_before", type: "date" });
  const metadata = h("input", {
    id: "metadata",
    name: "metadata",
    type: "text",
    autocomplete: "off",
    placeholder: "team=finance, year=2024",
    "aria-describedby": "metadata-hint",
  });
  const output = h("section", { "aria-live": "polite", "aria-busy": "false" });
  /** Where the command is shown to copy by hand when the clipboard refuses. */
  const curlBox = h("div", { class: "curl", hidden: true });

  /** The filters as query parameters (what the form holds), in the order the API lists them. */
  function filterParams() {
    /** @type {[string, string][]} */
    const pairs = [];
    if (fileType.value) pairs.push(["file_type", fileType.value]);
    if (after.value) pairs.push(["created_after", after.value]);
    if (before.value) pairs.push(["created_before", before.value]);
    pairs.push(...(metadataConditions(metadata.value) ?? []));
    return pairs;
  }
  /** The first page's API query: what search and "Copy as curl" send. */
  const params = () =>
    new URLSearchParams([["q", q.value], ["mode", mode.value], ["limit", limit.value], ...filterParams()]);
  /** The form in the URL: what a reload and a shared link come back to (the page size when not the default). */
  const urlState = () =>
    new URLSearchParams([
      ["q", q.value],
      ["mode", mode.value],
      ...filterParams(),
      ...(limit.value === DEFAULT_LIMIT ? [] : [["limit", limit.value]]),
    ]);
  /** Whether the form can be sent: the query given, the metadata conditions readable. */
  function valid() {
    metadata.setCustomValidity(
      metadataConditions(metadata.value) ? "" : "Write each condition as key=value, separated by commas.",
    );
    return q.reportValidity() && metadata.reportValidity();
  }

  /** The latest search asked for: an earlier, slower one that answers after it is not shown. */
  let latest = 0;
  /**
   * The pages shown so far of the current search: its query (the next page's is the same, changes
   * to the form since notwithstanding), the first page's answer, every result, the next cursor.
   * @typedef {{ query: URLSearchParams, first: SearchResponseDto, results: SearchResultDto[], next: string | null, ms: number }} Pages
   */
  /** @type {Pages | null} */
  let shown = null;
  /**
   * Runs the search (its first page), or with `more` the next page of the one shown, whose results
   * are added below the others.
   * @param {{ more?: boolean }} [options]
   */
  async function run({ more = false } = {}) {
    const mine = ++latest;
    error.hidden = true;
    output.setAttribute("aria-busy", "true");
    try {
      const started = performance.now();
      const previous = more ? shown : null;
      const query = previous ? previous.query : params();
      const page = new URLSearchParams(query);
      if (previous?.next) page.set("cursor", previous.next);
      const body = await search(page);
      if (mine !== latest) return;
      const ms = Math.round(performance.now() - started);
      shown = previous
        ? { ...previous, results: [...previous.results, ...body.results], next: body.next_cursor, ms }
        : { query, first: body, results: body.results, next: body.next_cursor, ms };
      showResults(shown);
    } catch (err) {
      if (mine === latest) showError(error, err);
    } finally {
      if (mine === latest) output.setAttribute("aria-busy", "false");
    }
  }

  async function copyCurl() {
    if (!valid()) return;
    const command = curlCommand(params());
    try {
      await navigator.clipboard.writeText(command);
      curlBox.hidden = true;
      say("Copied the API call for this search; set LOCUS_API_KEY to one of your keys.");
    } catch {
      // No clipboard (permission, or not a secure context): show it, selected, to copy by hand.
      const text = h("textarea", { id: "curl-command", readonly: true, rows: "3", class: "mono" }, command);
      curlBox.replaceChildren(h("label", { for: "curl-command" }, "The API call for this search"), text);
      curlBox.hidden = false;
      text.focus();
      text.select();
    }
  }

  const form = h(
    "form",
    {
      class: "card",
      role: "search",
      onsubmit: async (event) => {
        event.preventDefault();
        if (!valid()) return;
        // The query in the URL: the back button, a reload and a shared link all come back to it.
        showInUrl(`#/search?${urlState()}`);
        await run();
      },
    },
    h(
      "div",
      { class: "row" },
      h("div", { class: "grow" }, h("label", { for: "q" }, "Search your files"), q),
      h("div", {}, h("label", { for: "mode" }, "Mode"), mode),
    ),
    h(
      "details",
      { class: "filters" },
      h("summary", {}, "Filters and page size"),
      h(
        "div",
        { class: "row" },
        h("div", {}, h("label", { for: "file-type" }, "Kind of file"), fileType),
        h("div", {}, h("label", { for: "created-after" }, "Uploaded after"), after),
        h("div", {}, h("label", { for: "created-before" }, "Uploaded before"), before),
        h("div", {}, h("label", { for: "limit" }, "Page size"), limit),
      ),
      h("label", { for: "metadata" }, "Metadata"),
      metadata,
      h(
        "p",
        { id: "metadata-hint", class: "hint" },
        "Files whose metadata has each key=value (a list matches any of its items), separated by commas.",
      ),
    ),
    error,
    h(
      "div",
      { class: "button-row" },
      h("button", { type: "submit" }, "Search"),
      h("button", { type: "button", class: "secondary", onclick: copyCurl }, "Copy as curl"),
    ),
    curlBox,
  );

  /** @param {SearchResultDto} result */
  function resultFile(result) {
    return {
      id: result.file_id,
      original_name: result.files.original_name,
      file_type: result.files.file_type,
    };
  }

  /**
   * Where an answer came from, in plain words: the offline engine picks sentences from the
   * documents; a model writes them; a test key's answers are samples.
   * @param {SearchResponseDto} body
   */
  function answerSources(body) {
    const written =
      body.summary_source === "local"
        ? "Sentences picked from your documents (offline)"
        : body.summary_source === "sandbox"
          ? "A sample answer for a test key"
          : `Written by ${body.summary_source} from your documents`;
    const matched =
      body.vector_source === "local"
        ? "passages found by their words and by meaning (offline word vectors)"
        : body.vector_source === "sandbox"
          ? "sample passages"
          : `passages found by their words and by meaning (${body.vector_source})`;
    return `${written}; ${matched}.`;
  }

  /**
   * The pages shown so far: the first page's answer (ai mode), then every result, and a button for
   * the next page while there is one.
   * @param {Pages} pages
   */
  function showResults(pages) {
    const body = { ...pages.first, results: pages.results, count: pages.results.length };
    const ms = pages.ms;
    // Grouped by file, the files in the order of their best passage, each file's passages best
    // first; the result's index stays its rank in the answer (what citations point at).
    /** @type {Map<string, { result: SearchResultDto, rank: number }[]>} */
    const byFile = new Map();
    body.results.forEach((result, rank) => {
      const group = byFile.get(result.file_id) ?? [];
      group.push({ result, rank });
      byFile.set(result.file_id, group);
    });
    const groups = [...byFile.values()].map((passages) => {
      const first = passages[0]?.result;
      const name = first?.files.original_name ?? "";
      return h(
        "li",
        { class: "result-group" },
        h(
          "h2",
          { class: "result-file" },
          name,
          h("span", { class: "muted" }, ` ${passages.length} passage${passages.length === 1 ? "" : "s"}`),
        ),
        h(
          "ol",
          { class: "results" },
          ...passages.map(({ result, rank }) =>
            h(
              "li",
              { class: "result" },
              h(
                "button",
                {
                  type: "button",
                  class: "result-open",
                  onclick: () => openPreview(resultFile(result), result.locator, result),
                },
                h("span", { class: "visually-hidden" }, `Open ${name} at `),
                h("span", { class: "result-where" }, describeLocator(result.locator) || "the start"),
                h("span", { class: "hint" }, `#${rank + 1} · score ${result.score.toFixed(3)}`),
              ),
              h("p", { class: "result-text" }, withMarks(result.content, result.highlights)),
            ),
          ),
        ),
      );
    });
    /** @type {HTMLElement[]} */
    const parts = [
      h(
        "p",
        { class: "muted" },
        `${body.count} result${body.count === 1 ? "" : "s"}` +
          (groups.length > 0 ? ` in ${groups.length} file${groups.length === 1 ? "" : "s"}` : "") +
          (pages.next ? " so far" : "") +
          `, ${ms} ms`,
      ),
    ];
    if (body.mode === "ai" && body.answered === false) {
      // Nothing to stitch together: say so plainly, and leave the closest passages below.
      parts.unshift(
        h(
          "div",
          { class: "card summary" },
          h("h2", {}, "Answer"),
          h(
            "p",
            { class: "summary-text no-answer" },
            "No passage in your documents seems to answer this question. The closest passages are listed below.",
          ),
          h("p", { class: "hint" }, answerSources(body)),
        ),
      );
    } else if (body.mode === "ai" && typeof body.summary === "string") {
      const summary = h("p", { class: "summary-text" });
      const citations = body.citations ?? [];
      // Markers become links to the cited result's place; the rest stays text.
      for (const piece of body.summary.split(/(\[\d+\])/)) {
        const marker = /^\[(\d+)\]$/.exec(piece);
        const citation = marker && citations.find((c) => c.n === Number(marker[1]));
        if (citation) {
          summary.append(
            h(
              "button",
              {
                type: "button",
                class: "cite",
                "aria-label": `Source ${citation.n}: ${citations
                  .filter((c) => c.n === citation.n)
                  .map((c) => `${c.original_name}, ${describeLocator(c.locator)}`)
                  .join("; also ")}`,
                onclick: () =>
                  openPreview(
                    {
                      id: citation.file_id,
                      original_name: citation.original_name,
                      file_type: body.results[citation.result_index]?.files.file_type ?? "pdf",
                    },
                    citation.locator,
                    body.results[citation.result_index] ?? null,
                  ),
              },
              piece,
            ),
          );
        } else summary.append(piece);
      }
      parts.unshift(
        h(
          "div",
          { class: "card summary" },
          h("h2", {}, "Answer"),
          summary,
          h("p", { class: "hint" }, answerSources(body)),
          ...(body.fallbacks ?? []).map((f) =>
            h(
              "p",
              { class: "warning" },
              `The ${f.component} ${f.engine} failed (${f.reason}); ${f.used} answered instead.`,
            ),
          ),
        ),
      );
    }
    parts.push(
      groups.length > 0 ? h("ol", { class: "result-groups" }, ...groups) : h("p", {}, "Nothing found."),
    );
    if (pages.next) {
      parts.push(
        h(
          "button",
          { type: "button", class: "secondary", onclick: () => void run({ more: true }) },
          "More results",
        ),
      );
    }
    output.replaceChildren(...parts);
  }

  view("Search", form, output);
  // A search in the URL (a reload, a shared link, the back button): shown, and a quick one run
  // again. An ai search waits for a click: it costs the account more (a summary, maybe a paid
  // model), and a link someone else made should not spend that unasked. The page says so.
  const wanted = hashParams();
  const query = wanted.get("q");
  if (query) {
    q.value = query;
    const asked = wanted.get("mode");
    if (asked && MODES.includes(asked)) mode.value = asked;
    const kind = wanted.get("file_type");
    if (kind && FILE_TYPES.includes(kind)) fileType.value = kind;
    after.value = wanted.get("created_after") ?? "";
    before.value = wanted.get("created_before") ?? "";
    const size = wanted.get("limit");
    if (size && LIMITS.includes(size)) limit.value = size;
    metadata.value = [...wanted]
      .filter(([name]) => name.startsWith(METADATA_PREFIX))
      .map(([name, value]) => `${name.slice(METADATA_PREFIX.length)}=${value}`)
      .join(", ");
    if (filterParams().length > 0 || limit.value !== DEFAULT_LIMIT)
      form.querySelector("details")?.setAttribute("open", "");
    if (mode.value === "quick") void run();
    else {
      output.replaceChildren(
        h(
          "div",
          { class: "card held-search", role: "status" },
          h(
            "p",
            {},
            "This AI search was not run yet: it writes a summary, which can use a paid model, so a link " +
              "does not run it without your click.",
          ),
          h("button", { type: "button", onclick: () => void run() }, "Run this AI search"),
        ),
      );
    }
  }
}
