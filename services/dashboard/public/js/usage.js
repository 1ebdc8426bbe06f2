// @ts-check
// The account's plan, rate limit and uploads this month.
import { getUsage } from "./api.js";
import { formatBytes } from "./format.js";
import { h, view } from "./ui.js";

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
      h("dt", {}, "Largest upload"),
      h("dd", {}, formatBytes(usage.max_upload_bytes)),
    ),
  );
}
