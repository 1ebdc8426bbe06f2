// @ts-check
// The usage page's chart: searches and uploads per day as bars in an inline SVG (no chart library),
// with its words outside the SVG so they stay readable at any width, a sentence for screen readers,
// and every number in a table beside it.
import { h } from "./ui.js";

/** @typedef {import("../../src/api-types.ts").DashboardUsageDay} DashboardUsageDay */

const SVG = "http://www.w3.org/2000/svg";
/** The drawing's own units; it is stretched to the width and height the stylesheet gives it. */
const WIDTH = 300;
const HEIGHT = 100;

/**
 * An SVG element with attributes and children.
 * @param {string} tag
 * @param {Record<string, string | number>} attributes
 * @param {...(Element | string)} children
 */
function svg(tag, attributes, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/**
 * A day (YYYY-MM-DD, UTC) in words: "24 Nov".
 * @param {string} day
 */
export const formatDay = (day) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, {
    day: "numeric",
    month: "short",
    timeZone: "UTC",
  });

/**
 * @param {number} n
 * @param {"search" | "upload"} what
 */
const count = (n, what) =>
  `${n} ${what === "search" ? (n === 1 ? "search" : "searches") : n === 1 ? "upload" : "uploads"}`;

/**
 * Searches and uploads per day, oldest day first: a bar pair a day, the days' numbers in a table.
 * @param {DashboardUsageDay[]} days
 */
export function dailyChart(days) {
  const most = Math.max(1, ...days.map((d) => Math.max(d.searches, d.uploads)));
  const slot = WIDTH / Math.max(1, days.length);
  const bar = slot * 0.38;
  /** @param {number} n */
  const heightOf = (n) => (n / most) * (HEIGHT - 2);
  const bars = days.flatMap((d, i) => {
    const x = i * slot + slot * 0.1;
    return [
      svg(
        "rect",
        {
          class: "bar-searches",
          x,
          y: HEIGHT - heightOf(d.searches),
          width: bar,
          height: heightOf(d.searches),
        },
        svg("title", {}, `${formatDay(d.day)}: ${count(d.searches, "search")}`),
      ),
      svg(
        "rect",
        {
          class: "bar-uploads",
          x: x + bar,
          y: HEIGHT - heightOf(d.uploads),
          width: bar,
          height: heightOf(d.uploads),
        },
        svg("title", {}, `${formatDay(d.day)}: ${count(d.uploads, "upload")}`),
      ),
    ];
  });
  const searches = days.reduce((n, d) => n + d.searches, 0);
  const uploads = days.reduce((n, d) => n + d.uploads, 0);
  const first = days[0]?.day ?? "";
  const last = days.at(-1)?.day ?? "";
  const busiest = days.reduce(
    (best, d) => (d.searches + d.uploads > best.searches + best.uploads ? d : best),
    days[0] ?? { day: "", searches: 0, uploads: 0 },
  );
  const said =
    `${count(searches, "search")} and ${count(uploads, "upload")} from ${formatDay(first)} to ${formatDay(last)}` +
    (busiest.searches + busiest.uploads > 0
      ? `; the busiest day ${formatDay(busiest.day)}, with ${count(busiest.searches, "search")} and ${count(busiest.uploads, "upload")}.`
      : ".");

  const drawing = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", role: "img", "aria-label": said },
    svg("line", { class: "chart-grid", x1: 0, x2: WIDTH, y1: 1, y2: 1 }),
    svg("line", { class: "chart-grid", x1: 0, x2: WIDTH, y1: HEIGHT / 2, y2: HEIGHT / 2 }),
    svg("line", { class: "chart-base", x1: 0, x2: WIDTH, y1: HEIGHT, y2: HEIGHT }),
    ...bars,
  );
  const active = days.filter((d) => d.searches + d.uploads > 0);
  return h(
    "div",
    { class: "card" },
    h(
      "figure",
      { class: "chart", "aria-labelledby": "chart-title" },
      h("figcaption", { id: "chart-title" }, "Searches and uploads per day (UTC)"),
      h(
        "div",
        { class: "chart-plot" },
        h("span", { class: "chart-max", "aria-hidden": "true" }, String(most)),
        h("span", { class: "chart-half", "aria-hidden": "true" }, most % 2 === 0 ? String(most / 2) : ""),
        drawing,
      ),
      h(
        "div",
        { class: "chart-axis", "aria-hidden": "true" },
        h("span", {}, formatDay(first)),
        h("span", {}, formatDay(last)),
      ),
      h(
        "ul",
        { class: "legend" },
        h("li", {}, h("span", { class: "swatch searches" }), `Searches (${searches})`),
        h("li", {}, h("span", { class: "swatch uploads" }), `Uploads (${uploads})`),
      ),
    ),
    h(
      "details",
      {},
      h("summary", {}, "The numbers per day"),
      active.length === 0
        ? h("p", {}, "No searches or uploads on these days.")
        : h(
            "table",
            { id: "usage-days" },
            h("caption", { class: "visually-hidden" }, "Searches and uploads per day"),
            h(
              "thead",
              {},
              h("tr", {}, ...["Day", "Searches", "Uploads"].map((t) => h("th", { scope: "col" }, t))),
            ),
            h(
              "tbody",
              {},
              ...active.map((d) =>
                h(
                  "tr",
                  {},
                  h("td", { "data-label": "Day" }, formatDay(d.day)),
                  h("td", { "data-label": "Searches" }, d.searches),
                  h("td", { "data-label": "Uploads" }, d.uploads),
                ),
              ),
            ),
          ),
    ),
  );
}
