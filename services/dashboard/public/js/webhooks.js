// @ts-check
// Webhooks: the account's endpoints (add one, its secret shown once; delete; enable again one that
// was disabled after failing), a notice for each disabled endpoint with its reason, and an
// endpoint's delivery log with each attempt and a Redeliver button. All through the public API
// (/api/webhooks), with the session cookie and its CSRF token.
import { request } from "./api.js";
import { formatDate } from "./format.js";
import { confirmedDelete, errorBox, h, say, showError, view } from "./ui.js";

/** @typedef {import("@locus/contracts").WebhookEndpointDto} WebhookEndpointDto */
/** @typedef {import("@locus/contracts").WebhookEndpointWithSecretDto} WebhookEndpointWithSecretDto */
/** @typedef {import("@locus/contracts").WebhookDeliveryPageDto} WebhookDeliveryPageDto */
/** @typedef {import("@locus/contracts").WebhookDeliveryDto} WebhookDeliveryDto */

const EVENTS = /** @type {const} */ (["file.ready", "file.failed", "file.deleted"]);
const path = (/** @type {string} */ id) => `/api/webhooks/${encodeURIComponent(id)}`;

const listEndpoints = () => /** @type {Promise<WebhookEndpointDto[]>} */ (request("/api/webhooks"));
/** @param {{ url: string, events: string[], description: string }} body */
const createEndpoint = (body) =>
  /** @type {Promise<WebhookEndpointWithSecretDto>} */ (request("/api/webhooks", { method: "POST", body }));
/** @param {string} id */
const deleteEndpoint = (id) => request(path(id), { method: "DELETE" });
/** @param {string} id */
const enableEndpoint = (id) =>
  /** @type {Promise<WebhookEndpointDto>} */ (
    request(path(id), { method: "PATCH", body: { enabled: true } })
  );
/** @param {string} id */
const listDeliveries = (id) =>
  /** @type {Promise<WebhookDeliveryPageDto>} */ (request(`${path(id)}/deliveries?limit=50`));
/**
 * @param {string} id
 * @param {string} deliveryId
 */
const redeliver = (id, deliveryId) =>
  request(`${path(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, { method: "POST" });

/** @param {WebhookDeliveryDto["status"]} status */
const statusBadge = (status) =>
  h(
    "span",
    { class: `badge ${status === "succeeded" ? "ready" : status === "failed" ? "failed" : "pending"}` },
    status === "succeeded" ? "Delivered" : status === "failed" ? "Failed" : "Retrying",
  );

export async function webhooksView() {
  const error = errorBox();
  const notices = h("div", { class: "webhook-notices" });
  const created = h("section", { class: "card new-key", hidden: true, "aria-live": "polite" });
  const log = h("section", { class: "card", hidden: true, "aria-live": "polite" });
  const tbody = h("tbody");

  const url = h("input", {
    id: "webhook-url",
    name: "url",
    type: "url",
    required: true,
    maxlength: "2048",
    placeholder: "https://example.com/locus-webhooks",
  });
  const description = h("input", { id: "webhook-description", name: "description", maxlength: "500" });
  const boxes = EVENTS.map((event) =>
    h("input", { type: "checkbox", id: `webhook-event-${event}`, value: event, checked: true }),
  );

  async function load() {
    const endpoints = await listEndpoints();
    // The owner is told here, at the top, of every endpoint Locus stopped sending to, and why.
    notices.replaceChildren(
      ...endpoints
        .filter((e) => !e.enabled)
        .map((e) =>
          h(
            "div",
            { class: "warning webhook-disabled", role: "alert" },
            h("strong", {}, `Disabled: ${e.url}`),
            h("p", {}, e.disabled_reason ?? "Disabled."),
            h(
              "button",
              {
                type: "button",
                class: "small",
                "aria-label": `Enable ${e.url} again`,
                onclick: () => void enable(e),
              },
              "Enable again",
            ),
          ),
        ),
    );
    tbody.replaceChildren(
      ...(endpoints.length === 0
        ? [h("tr", {}, h("td", { colspan: "5" }, "No endpoints yet: add one above."))]
        : endpoints.map((e) =>
            h(
              "tr",
              { "data-endpoint": e.id },
              h(
                "td",
                { "data-label": "URL", class: "wrap-anywhere" },
                h("code", {}, e.url),
                e.description ? h("div", { class: "muted" }, e.description) : null,
              ),
              h("td", { "data-label": "Events" }, e.events.join(", ")),
              h(
                "td",
                { "data-label": "Status" },
                h(
                  "span",
                  { class: `badge ${e.enabled ? "active" : "revoked"}` },
                  e.enabled ? "Enabled" : "Disabled",
                ),
              ),
              h(
                "td",
                { "data-label": "Last success" },
                e.last_success_at ? formatDate(e.last_success_at) : "Never",
              ),
              h(
                "td",
                { class: "actions" },
                h(
                  "button",
                  {
                    type: "button",
                    class: "secondary small",
                    "aria-label": `Deliveries to ${e.url}`,
                    onclick: () => void showLog(e),
                  },
                  "Deliveries",
                ),
                e.enabled
                  ? null
                  : h(
                      "button",
                      {
                        type: "button",
                        class: "small",
                        "aria-label": `Enable ${e.url} again`,
                        onclick: () => void enable(e),
                      },
                      "Enable",
                    ),
                h(
                  "button",
                  {
                    type: "button",
                    class: "danger small",
                    "aria-label": `Delete ${e.url}`,
                    onclick: () =>
                      confirmedDelete({
                        title: "Delete this endpoint?",
                        text: `Nothing more is sent to ${e.url}, and its delivery log goes with it.`,
                        ok: "Delete endpoint",
                        remove: () => deleteEndpoint(e.id),
                        done: "Endpoint deleted.",
                        reload: async () => {
                          log.hidden = true;
                          await load();
                        },
                        error,
                      }),
                  },
                  "Delete",
                ),
              ),
            ),
          )),
    );
  }

  /** @param {WebhookEndpointDto} endpoint */
  async function enable(endpoint) {
    try {
      await enableEndpoint(endpoint.id);
      say(`Enabled ${endpoint.url} again: what waited for it goes out now.`);
      await load();
    } catch (err) {
      showError(error, err);
    }
  }

  /** @param {WebhookEndpointDto} endpoint */
  async function showLog(endpoint) {
    const problem = errorBox();
    const page = await listDeliveries(endpoint.id);
    const rows = page.deliveries.map((d) =>
      h(
        "tr",
        { "data-delivery": d.id },
        h(
          "td",
          { "data-label": "Event", class: "wrap-anywhere" },
          d.event_type,
          h("div", { class: "muted mono" }, d.event_id),
        ),
        h("td", { "data-label": "Created" }, formatDate(d.created_at)),
        h("td", { "data-label": "Status" }, statusBadge(d.status)),
        h(
          "td",
          { "data-label": "Attempts" },
          h(
            "ol",
            { class: "attempts" },
            ...d.attempt_log.map((a) =>
              h(
                "li",
                {},
                `${formatDate(a.attempted_at)}: `,
                a.status_code === null ? "no answer" : `HTTP ${a.status_code}`,
                ` in ${a.duration_ms} ms`,
                a.error ? h("div", { class: "muted" }, a.error) : null,
              ),
            ),
          ),
          d.status === "pending" && !endpoint.enabled
            ? h("div", { class: "muted" }, "Held: sent once the endpoint is enabled again.")
            : d.status === "pending" && d.next_attempt_at
              ? h("div", { class: "muted" }, `Next: ${formatDate(d.next_attempt_at)}`)
              : null,
        ),
        h(
          "td",
          { class: "actions" },
          h(
            "button",
            {
              type: "button",
              class: "secondary small",
              "aria-label": `Redeliver ${d.event_type} ${d.event_id}`,
              onclick: async () => {
                try {
                  await redeliver(endpoint.id, d.id);
                  say(`${d.event_type} is being sent again.`);
                  // The attempt takes a moment: show the log again once it has had one.
                  setTimeout(() => void showLog(endpoint).catch((err) => showError(problem, err)), 1500);
                } catch (err) {
                  showError(problem, err);
                }
              },
            },
            "Redeliver",
          ),
        ),
      ),
    );
    log.replaceChildren(
      h("h2", { tabindex: "-1", id: "webhook-log-title" }, `Deliveries to ${endpoint.url}`),
      problem,
      rows.length === 0
        ? h("p", {}, "Nothing sent yet: deliveries appear here when a file is ready, fails or is deleted.")
        : h(
            "div",
            { class: "table-wrap webhook-table" },
            h(
              "table",
              {},
              h("caption", { class: "visually-hidden" }, `Deliveries to ${endpoint.url}, newest first`),
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ...["Event", "Created", "Status", "Attempts", ""].map((t) => h("th", { scope: "col" }, t)),
                ),
              ),
              h("tbody", {}, ...rows),
            ),
          ),
      h("button", { type: "button", class: "secondary", onclick: () => (log.hidden = true) }, "Close"),
    );
    log.hidden = false;
    log.querySelector("h2")?.focus();
  }

  /** @param {WebhookEndpointWithSecretDto} endpoint */
  function showSecret(endpoint) {
    const value = h("input", {
      id: "webhook-secret",
      readonly: true,
      value: endpoint.secret,
      class: "mono",
      "aria-describedby": "webhook-secret-warning",
    });
    created.replaceChildren(
      h("h2", {}, "Your endpoint's signing secret"),
      h(
        "p",
        { id: "webhook-secret-warning", class: "warning" },
        "Copy it now: it verifies the webhook-signature header (any Standard Webhooks library) and is not shown again.",
      ),
      h("label", { for: "webhook-secret" }, "Secret"),
      h(
        "div",
        { class: "copy-row" },
        value,
        h(
          "button",
          {
            type: "button",
            onclick: async () => {
              try {
                await navigator.clipboard.writeText(endpoint.secret);
              } catch {
                value.select();
                document.execCommand("copy");
              }
              say("Secret copied to the clipboard.");
            },
          },
          "Copy",
        ),
      ),
      h(
        "button",
        { type: "button", class: "secondary", onclick: () => (created.hidden = true) },
        "I have copied it",
      ),
    );
    created.hidden = false;
    value.focus();
    value.select();
  }

  const form = h(
    "form",
    {
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        error.hidden = true;
        const events = boxes.filter((b) => b.checked).map((b) => b.value);
        if (events.length === 0) {
          showError(error, new Error("Choose at least one event."));
          return;
        }
        try {
          const endpoint = await createEndpoint({ url: url.value, events, description: description.value });
          url.value = "";
          description.value = "";
          showSecret(endpoint);
          await load();
        } catch (err) {
          showError(error, err);
        }
      },
    },
    h("h2", {}, "Add an endpoint"),
    h(
      "div",
      { class: "row" },
      h("div", {}, h("label", { for: "webhook-url" }, "URL"), url),
      h("div", {}, h("label", { for: "webhook-description" }, "Description (optional)"), description),
    ),
    h(
      "fieldset",
      { class: "events" },
      h("legend", {}, "Events"),
      ...boxes.map((box) => h("label", { for: box.id, class: "check" }, box, ` ${box.value}`)),
    ),
    error,
    h("button", { type: "submit" }, "Add endpoint"),
  );

  const table = h(
    "div",
    { class: "table-wrap webhook-table" },
    h(
      "table",
      {},
      h("caption", { class: "visually-hidden" }, "Your webhook endpoints"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["URL", "Events", "Status", "Last success", ""].map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      tbody,
    ),
  );
  view("Webhooks", notices, form, created, h("h2", {}, "Your endpoints"), table, log);
  await load();
}
