// @ts-check
// The account's plan, rate limit and uploads this month; searches and uploads per day (a chart) and
// per key, with each key's last use.
import { getUsage } from "./api.js";
import { dailyChart } from "./chart.js";
import { formatBytes, formatDate } from "./format.js";
import { h, view } from "./ui.js";

/** @typedef {import("../../src/api-types.ts").DashboardKeyUsage} DashboardKeyUsage */

/**
 * Each key's searches and uploads over the chart's days, and when it was last used.
 * @param {DashboardKeyUsage[]} perKey
 * @param {number} days
 */
function perKeyTable(perKey, days) {
  const rows = perKey.map(({ key, searches, uploads }) =>
    h(
      "tr",
      {},
      h(
        "td",
        { "data-label": "Key", class: "wrap-anywhere" },
        key
          ? [
              key.name,
              " ",
              h("code", { class: "key-prefix" }, `${key.prefix}…`),
              key.status === "revoked" ? " (revoked)" : "",
            ]
          : "This dashboard",
      ),
      h("td", { "data-label": "Searches" }, searches),
      h("td", { "data-label": "Uploads" }, uploads),
      h("td", { "data-label": "Last used" }, key ? formatDate(key.last_used_at) : "—"),
    ),
  );
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { id: "usage-keys" },
      h("caption", { class: "visually-hidden" }, `Searches and uploads per key, last ${days} days`),
      h(
        "thead",
        {},
        h("tr", {}, ...["Key", "Searches", "Uploads", "Last used"].map((t) => h("th", { scope: "col" }, t))),
      ),
      h(
        "tbody",
        {},
        rows.length > 0
          ? rows
          : h(
              "tr",
              {},
              h("td", { colspan: "4" }, `No searches or uploads with a live key in the last ${days} days.`),
            ),
      ),
    ),
  );
}

export async function usageView() {
  const usage = await getUsage();
  const unlimited = usage.monthly_upload_quota === 0;
  const used = h("progress", {
    id: "quota",
    max: String(unlimited ? 1 : usage.monthly_upload_quota),
    value: String(unlimited ? 0 : usage.uploads_this_month),
  });
  view(
    "Usage",
    h(
      "dl",
      { class: "card facts" },
      h("dt", {}, "Plan"),
      h("dd", {}, usage.plan),
      h("dt", {}, "Rate limit"),
      h("dd", {}, `${usage.rate_limit_per_second} requests a second`),
      h("dt", {}, `Uploads in ${usage.month} (live keys and this dashboard)`),
      h(
        "dd",
        {},
        unlimited
          ? `${usage.uploads_this_month} (no monthly limit)`
          : `${usage.uploads_this_month} of ${usage.monthly_upload_quota}`,
        unlimited
          ? null
          : h(
              "div",
              {},
              h("label", { for: "quota", class: "visually-hidden" }, "Share of the monthly quota used"),
              used,
            ),
      ),
      h("dt", {}, "Upload size limit"),
      h("dd", {}, formatBytes(usage.max_upload_bytes)),
    ),
    h("h2", {}, `The last ${usage.days.length} days`),
    h("p", { class: "hint" }, "Live keys and this dashboard; test keys count nothing."),
    dailyChart(usage.days),
    h("h2", {}, "Per key"),
    perKeyTable(usage.per_key, usage.days.length),
  );
}
