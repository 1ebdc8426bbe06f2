// @ts-check
// The search playground: a query in either mode, its results with their matched words, and an ai
// answer whose citation markers open the cited place.
import { search } from "./api.js";
import { describeLocator, withMarks } from "./format.js";
import { openPreview } from "./preview.js";
import { errorBox, h, showError, view } from "./ui.js";

/** @typedef {import("@locus/contracts").SearchResponseDto} SearchResponseDto */
/** @typedef {import("@locus/contracts").SearchResultDto} SearchResultDto */

export function searchView() {
  const error = errorBox();
  const q = h("input", { id: "q", name: "q", type: "search", required: true, maxlength: "1000" });
  const mode = h(
    "select",
    { id: "mode", name: "mode" },
    h("option", { value: "quick" }, "Quick: keywords (BM25)"),
    h("option", { value: "ai" }, "AI: meaning, with a cited summary"),
  );
  const output = h("section", { "aria-live": "polite", "aria-busy": "false" });
  const form = h(
    "form",
    {
      class: "card",
      role: "search",
      onsubmit: async (event) => {
        event.preventDefault();
        error.hidden = true;
        output.setAttribute("aria-busy", "true");
        try {
          const params = new URLSearchParams({ q: q.value, mode: mode.value, limit: "20" });
          const started = performance.now();
          const body = await search(params);
          showResults(body, Math.round(performance.now() - started));
        } catch (err) {
          showError(error, err);
        } finally {
          output.setAttribute("aria-busy", "false");
        }
      },
    },
    h(
      "div",
      { class: "row" },
      h("div", { class: "grow" }, h("label", { for: "q" }, "Search your files"), q),
      h("div", {}, h("label", { for: "mode" }, "Mode"), mode),
    ),
    error,
    h("button", { type: "submit" }, "Search"),
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
   * @param {SearchResponseDto} body
   * @param {number} ms
   */
  function showResults(body, ms) {
    const items = body.results.map((result, i) =>
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
          h("span", { class: "result-file" }, `${i + 1}. ${result.files.original_name}`),
          h("span", { class: "result-where" }, describeLocator(result.locator)),
        ),
        h("p", { class: "result-text" }, withMarks(result.content, result.highlights)),
        h("span", { class: "hint" }, `score ${result.score.toFixed(3)}`),
      ),
    );
    /** @type {HTMLElement[]} */
    const parts = [
      h("p", { class: "muted" }, `${body.count} result${body.count === 1 ? "" : "s"} in ${ms} ms`),
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
    parts.push(items.length > 0 ? h("ol", { class: "results" }, ...items) : h("p", {}, "Nothing found."));
    output.replaceChildren(...parts);
  }

  view("Search", form, output);
}
