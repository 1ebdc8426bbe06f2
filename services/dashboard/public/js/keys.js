// @ts-check
// API keys: create one (shown whole this once), list them with their last use, rename or revoke one.
import { createKey, listKeys, renameKey, revokeKey } from "./api.js";
import { formatDate } from "./format.js";
import { confirmedDelete, errorBox, h, say, showError, view } from "./ui.js";

/** @typedef {import("../../src/api-types.ts").NewDashboardKey} NewDashboardKey */
/** @typedef {import("../../src/api-types.ts").DashboardKey} DashboardKey */

export async function keysView() {
  const error = errorBox();
  const name = h("input", {
    id: "key-name",
    name: "name",
    required: true,
    maxlength: "100",
    placeholder: "e.g. production server",
  });
  const type = h(
    "select",
    { id: "key-type", name: "type" },
    h("option", { value: "live" }, "Live: real files, counts against the quota"),
    h("option", { value: "test" }, "Test: instant mock answers, stores nothing"),
  );
  const created = h("section", { class: "card new-key", hidden: true, "aria-live": "polite" });
  const tbody = h("tbody");
  const table = h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "keys" },
      h("caption", { class: "visually-hidden" }, "Your API keys"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Name", "Key", "Created", "Type", "Last used", "Status", ""].map((t) =>
            h("th", { scope: "col" }, t),
          ),
        ),
      ),
      tbody,
    ),
  );

  async function load() {
    const keys = await listKeys();
    tbody.replaceChildren(
      ...(keys.length === 0
        ? [h("tr", {}, h("td", { colspan: "7" }, "No keys yet: create one above."))]
        : keys.map((key) =>
            h(
              "tr",
              { "data-key": key.id },
              h("td", { "data-label": "Name", class: "wrap-anywhere" }, key.name),
              h("td", { "data-label": "Key" }, h("code", { class: "key-prefix" }, `${key.prefix}…`)),
              h("td", { "data-label": "Created" }, formatDate(key.created_at)),
              h("td", { "data-label": "Type" }, key.type === "live" ? "Live" : "Test"),
              h(
                "td",
                { "data-label": "Last used" },
                key.last_used_at ? formatDate(key.last_used_at) : "Never",
              ),
              h(
                "td",
                { "data-label": "Status" },
                h("span", { class: `badge ${key.status}` }, key.status === "active" ? "Active" : "Revoked"),
              ),
              h(
                "td",
                { class: "actions" },
                h(
                  "button",
                  {
                    type: "button",
                    class: "secondary small",
                    "aria-label": `Rename ${key.name}`,
                    onclick: (event) => startRename(key, /** @type {HTMLElement} */ (event.currentTarget)),
                  },
                  "Rename",
                ),
                key.status === "active"
                  ? h(
                      "button",
                      {
                        type: "button",
                        class: "danger small",
                        "aria-label": `Revoke ${key.name}`,
                        onclick: () =>
                          confirmedDelete({
                            title: `Revoke “${key.name}”?`,
                            text: "Requests with this key are refused (401) from now on. This cannot be undone.",
                            ok: "Revoke key",
                            remove: () => revokeKey(key.id),
                            done: `Revoked “${key.name}”.`,
                            reload: load,
                            error,
                          }),
                      },
                      "Revoke",
                    )
                  : null,
              ),
            ),
          )),
    );
  }

  /**
   * Turns the key's name cell into a small form: Enter or Save renames, Escape or Cancel leaves it.
   * @param {DashboardKey} key
   * @param {HTMLElement} button The Rename button, focused again when the form goes.
   */
  function startRename(key, button) {
    const cell = button.closest("tr")?.querySelector('td[data-label="Name"]');
    if (!(cell instanceof HTMLElement)) return;
    const inputId = `rename-${key.id}`;
    const input = h("input", { id: inputId, value: key.name, required: true, maxlength: "100" });
    const problem = errorBox();
    const cancel = () => {
      cell.replaceChildren(key.name);
      button.focus();
    };
    const form = h(
      "form",
      {
        class: "rename",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            const renamed = await renameKey(key.id, input.value);
            say(`Renamed “${key.name}” to “${renamed.name}”.`);
            await load();
            // Back where the user was: the renamed key's Rename button.
            const again = tbody.querySelector(`tr[data-key="${key.id}"] .actions button`);
            if (again instanceof HTMLElement) again.focus();
          } catch (err) {
            showError(problem, err);
          }
        },
        onkeydown: (event) => {
          if (/** @type {KeyboardEvent} */ (event).key === "Escape") cancel();
        },
      },
      h("label", { for: inputId, class: "visually-hidden" }, `New name for ${key.name}`),
      input,
      h("button", { type: "submit", class: "small" }, "Save"),
      h("button", { type: "button", class: "secondary small", onclick: cancel }, "Cancel"),
      problem,
    );
    cell.replaceChildren(form);
    input.focus();
    input.select();
  }

  /** @param {NewDashboardKey} key */
  function showNewKey(key) {
    const value = h("input", {
      id: "new-key",
      readonly: true,
      value: key.key,
      class: "mono",
      "aria-describedby": "new-key-warning",
    });
    const copy = h(
      "button",
      {
        type: "button",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(key.key);
          } catch {
            value.select();
            document.execCommand("copy");
          }
          copy.textContent = "Copied";
          say("Key copied to the clipboard.");
        },
      },
      "Copy",
    );
    created.replaceChildren(
      h("h2", {}, `Your new ${key.type} key “${key.name}”`),
      h(
        "p",
        { id: "new-key-warning", class: "warning" },
        "Copy it now: it is stored only as a hash and will not be shown again.",
      ),
      h("label", { for: "new-key" }, "Key"),
      h("div", { class: "copy-row" }, value, copy),
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
        try {
          const key = await createKey(name.value, type.value);
          name.value = "";
          showNewKey(key);
          await load();
        } catch (err) {
          showError(error, err);
        }
      },
    },
    h("h2", {}, "Create a key"),
    h(
      "div",
      { class: "row" },
      h("div", {}, h("label", { for: "key-name" }, "Name"), name),
      h("div", {}, h("label", { for: "key-type" }, "Environment"), type),
    ),
    error,
    h("button", { type: "submit" }, "Create key"),
  );
  view("API keys", form, created, h("h2", {}, "Your keys"), table);
  await load();
}
