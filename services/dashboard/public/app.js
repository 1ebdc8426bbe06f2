// The Locus dashboard: one page, no build step and no third-party code but pdf.js (served by Locus
// from its npm package). Views are drawn with DOM calls (text is always set as text, never as
// HTML), routed by the URL's hash: #/signin, #/signup, #/keys, #/files, #/search, #/usage.
// Files and search go through the public API (/api/...) with the session cookie and its CSRF token.

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const toast = document.getElementById("toast");

/** The signed-in session: { user: { email, plan }, csrf } or null. */
let session = null;
/** Stops the current view's timers when another view is drawn. */
let leaveView = () => {};

// ---------------------------------------------------------------------------------------------
// Small helpers

/** An element with attributes (on* as listeners) and children (strings become text nodes). */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === "class") element.className = value;
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function say(message) {
  toast.textContent = message;
  toast.classList.add("shown");
  clearTimeout(say.timer);
  say.timer = setTimeout(() => toast.classList.remove("shown"), 4000);
}

class ApiError extends Error {
  constructor(status, detail, retryAfterS = null) {
    super(detail);
    this.status = status;
    /** Seconds the server asked us to wait (Retry-After), when it said. */
    this.retryAfterS = retryAfterS;
  }
}

/** A Retry-After header's seconds (a number of seconds or an HTTP date), or null. */
function retryAfterSeconds(value) {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}

/** A readable sentence from an error body: {detail: "..."} or FastAPI's [{msg}] list. */
function detailOf(body, status) {
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) return body.detail.map((d) => d.msg).join("; ");
  return `The server answered ${status}.`;
}

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (session) headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (res.status === 401 && session && !path.startsWith("/dashboard/api/sign")) {
    session = null;
    go("#/signin");
    throw new ApiError(401, "Your session has ended: sign in again.");
  }
  if (!res.ok) {
    throw new ApiError(
      res.status,
      detailOf(data, res.status),
      retryAfterSeconds(res.headers.get("Retry-After")),
    );
  }
  return data;
}

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

const formatDate = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

function formatSeconds(s) {
  const whole = Math.floor(s);
  const m = Math.floor(whole / 60);
  const sec = String(whole % 60).padStart(2, "0");
  return m >= 60 ? `${Math.floor(m / 60)}:${String(m % 60).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** Where a passage is, in words: "Page 3, line 17", "Lines 4–6 of page 2", "0:42–0:50". */
function describeLocator(locator) {
  if (!locator) return "";
  if (locator.timestamp !== undefined) {
    const end = locator.timestamp_end !== undefined ? `–${formatSeconds(locator.timestamp_end)}` : "";
    const what = locator.source === "screen" ? "on screen" : "spoken";
    return `${formatSeconds(locator.timestamp)}${end} (${what})`;
  }
  const parts = [];
  if (locator.page !== undefined) parts.push(`Page ${locator.page}`);
  if (locator.line !== undefined) {
    parts.push(
      locator.line_end !== undefined && locator.line_end !== locator.line
        ? `lines ${locator.line}–${locator.line_end}`
        : `line ${locator.line}`,
    );
  }
  return parts.join(", ");
}

/**
 * `content` with its highlights ({start, end} in code points, end exclusive) as <mark> elements:
 * text nodes and elements, never HTML. Spans out of range or overlapping are clipped.
 */
function withMarks(content, highlights) {
  if (!Array.isArray(highlights) || highlights.length === 0) return [content];
  const chars = Array.from(content);
  const spans = highlights
    .filter((s) => Number.isInteger(s?.start) && Number.isInteger(s?.end))
    .map((s) => [Math.max(0, s.start), Math.min(chars.length, s.end)])
    .sort((a, b) => a[0] - b[0]);
  const parts = [];
  let at = 0;
  for (const [start, end] of spans) {
    const from = Math.max(start, at);
    if (end <= from) continue;
    if (from > at) parts.push(chars.slice(at, from).join(""));
    parts.push(h("mark", {}, chars.slice(from, end).join("")));
    at = end;
  }
  if (at < chars.length) parts.push(chars.slice(at).join(""));
  return parts;
}

/** A modal question; resolves true when confirmed. */
function confirmWith(title, text, okLabel) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = okLabel;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}

/** Asks first; then sends the DELETE, says it is done and redraws, or shows why it failed. */
async function confirmedDelete({ title, text, ok, path, done, reload, error }) {
  if (!(await confirmWith(title, text, ok))) return;
  try {
    await api(path, { method: "DELETE" });
    say(done);
    await reload();
  } catch (err) {
    showError(error, err);
  }
}

function view(title, ...content) {
  leaveView();
  leaveView = () => {};
  document.title = `${title} · Locus dashboard`;
  const heading = h("h1", { tabindex: "-1" }, title);
  main.replaceChildren(heading, ...content);
  heading.focus();
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === location.hash) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function errorBox() {
  return h("p", { class: "error", role: "alert", hidden: true });
}

function showError(box, err) {
  box.textContent = err instanceof Error ? err.message : String(err);
  box.hidden = false;
}

// ---------------------------------------------------------------------------------------------
// Signing in and up

function accountView(mode) {
  const signingUp = mode === "signup";
  const error = errorBox();
  const email = h("input", {
    id: "email",
    name: "email",
    type: "email",
    autocomplete: "email",
    required: true,
  });
  const password = h("input", {
    id: "password",
    name: "password",
    type: "password",
    autocomplete: signingUp ? "new-password" : "current-password",
    minlength: signingUp ? "10" : undefined,
    required: true,
    "aria-describedby": signingUp ? "password-hint" : undefined,
  });
  const submit = h("button", { type: "submit" }, signingUp ? "Create account" : "Sign in");
  const form = h(
    "form",
    {
      class: "card narrow",
      onsubmit: async (event) => {
        event.preventDefault();
        error.hidden = true;
        submit.disabled = true;
        try {
          session = await api(`/dashboard/api/${signingUp ? "signup" : "signin"}`, {
            method: "POST",
            body: { email: email.value, password: password.value },
          });
          signedInChrome();
          go("#/keys");
        } catch (err) {
          showError(error, err);
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("label", { for: "email" }, "Email"),
    email,
    h("label", { for: "password" }, "Password"),
    password,
    signingUp
      ? h(
          "p",
          { id: "password-hint", class: "hint" },
          "At least 10 characters; a few unrelated words work well.",
        )
      : null,
    error,
    submit,
    h(
      "p",
      {},
      signingUp ? "Already have an account? " : "New to Locus? ",
      h("a", { href: signingUp ? "#/signin" : "#/signup" }, signingUp ? "Sign in" : "Create an account"),
    ),
  );
  view(signingUp ? "Create your Locus account" : "Sign in to Locus", form);
}

function signedInChrome() {
  nav.hidden = !session;
  who.textContent = session ? `${session.user.email} (${session.user.plan})` : "";
}

document.getElementById("signout").addEventListener("click", async () => {
  await api("/dashboard/api/signout", { method: "POST" }).catch(() => undefined);
  session = null;
  signedInChrome();
  go("#/signin");
  say("Signed out.");
});

// ---------------------------------------------------------------------------------------------
// API keys

async function keysView() {
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
      {},
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
    const keys = await api("/dashboard/api/keys");
    tbody.replaceChildren(
      ...(keys.length === 0
        ? [h("tr", {}, h("td", { colspan: "7" }, "No keys yet: create one above."))]
        : keys.map((key) =>
            h(
              "tr",
              {},
              h("td", { "data-label": "Name" }, key.name),
              h("td", { "data-label": "Key" }, h("code", {}, `${key.prefix}…`)),
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
                {},
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
                            path: `/dashboard/api/keys/${encodeURIComponent(key.id)}`,
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
          const key = await api("/dashboard/api/keys", {
            method: "POST",
            body: { name: name.value, type: type.value },
          });
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

// ---------------------------------------------------------------------------------------------
// Files

const FINISHED = new Set(["ready", "failed"]);

async function filesView() {
  const error = errorBox();
  const uploads = h("ul", { class: "uploads", "aria-label": "Uploads in progress" });
  // Hidden and out of the tab order: the drop zone below is the one control (Enter or Space opens it).
  const input = h("input", {
    id: "file-input",
    type: "file",
    multiple: true,
    class: "visually-hidden",
    tabindex: "-1",
  });
  const drop = h(
    "label",
    { for: "file-input", class: "drop", tabindex: "0", role: "button", "aria-describedby": "drop-hint" },
    h("strong", {}, "Choose files"),
    " or drop them here",
    h(
      "span",
      { id: "drop-hint", class: "hint" },
      "PDF, images (PNG, JPEG, WebP, TIFF, GIF, BMP), audio and video.",
    ),
  );
  drop.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      input.click();
    }
  });
  for (const type of ["dragenter", "dragover"]) {
    drop.addEventListener(type, (event) => {
      event.preventDefault();
      drop.classList.add("over");
    });
  }
  for (const type of ["dragleave", "drop"]) drop.addEventListener(type, () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    uploadAll(event.dataTransfer.files);
  });
  input.addEventListener("change", () => {
    uploadAll(input.files);
    input.value = "";
  });

  const tbody = h("tbody");
  const table = h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      h("caption", { class: "visually-hidden" }, "Your files"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Name", "Type", "Status", "Size", "Uploaded", ""].map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      tbody,
    ),
  );

  // The list: loaded now, and looked at again while anything is still being read. Every look is a
  // request against the account's rate limit (5 a second on the free plan), shared with uploads:
  // it looks every few seconds, only while something moves, and after a refusal it waits what the
  // server said (or a little longer each time) instead of stopping for good.
  let timer;
  let stopped = false;
  let listFailures = 0;
  async function load() {
    const files = await api("/api/files?limit=200");
    tbody.replaceChildren(
      ...(files.length === 0
        ? [h("tr", {}, h("td", { colspan: "6" }, "No files yet: upload one above."))]
        : files.map(fileRow)),
    );
    return files;
  }
  function scheduleRefresh(ms) {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(refresh, ms);
  }
  async function refresh() {
    try {
      const files = await load();
      listFailures = 0;
      if (files.some((f) => !FINISHED.has(f.status)) || busyUploads() > 0) scheduleRefresh(2500);
    } catch (err) {
      listFailures += 1;
      const wait = err.retryAfterS ?? Math.min(30, 2 ** listFailures);
      scheduleRefresh(Math.max(1000, wait * 1000));
    }
  }
  function fileRow(file) {
    const status =
      file.status === "failed"
        ? h("span", { class: "badge failed", title: file.error?.message ?? "" }, "failed")
        : h(
            "span",
            { class: `badge ${file.status}` },
            file.status === "processing" && file.progress
              ? `processing ${Math.round(file.progress * 100)}%`
              : file.status,
          );
    return h(
      "tr",
      { "data-file": file.id },
      h("td", { "data-label": "Name" }, file.original_name),
      h("td", { "data-label": "Type" }, file.file_type),
      h(
        "td",
        { "data-label": "Status" },
        status,
        file.status === "failed" && file.error ? h("div", { class: "hint" }, file.error.message) : null,
      ),
      h("td", { "data-label": "Size" }, formatBytes(file.size_bytes)),
      h("td", { "data-label": "Uploaded" }, formatDate(file.created_at)),
      h(
        "td",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            class: "secondary small",
            "aria-label": `Preview ${file.original_name}`,
            onclick: () => openPreview(file, null),
          },
          "Preview",
        ),
        h(
          "button",
          {
            type: "button",
            class: "danger small",
            "aria-label": `Delete ${file.original_name}`,
            onclick: () =>
              confirmedDelete({
                title: `Delete “${file.original_name}”?`,
                text: "The file and everything found in it are removed. This cannot be undone.",
                ok: "Delete file",
                path: `/api/files/${encodeURIComponent(file.id)}`,
                done: `Deleted “${file.original_name}”.`,
                reload: load,
                error,
              }),
          },
          "Delete",
        ),
      ),
    );
  }

  // Uploads go out two at a time: a dozen files dropped at once would otherwise spend the account's
  // rate limit in one burst, and some would be refused. A refusal for the rate limit (429 with a
  // short Retry-After) is waited out and tried again; any other failure stays on the list, marked
  // failed, with a button to try again. No upload is lost without a word.
  const MAX_PARALLEL_UPLOADS = 2;
  const MAX_ATTEMPTS = 10;
  const waiting = [];
  let sending = 0;
  const busyUploads = () => sending + waiting.length;

  function uploadAll(files) {
    for (const file of files) enqueue(uploadItem(file));
    if (busyUploads() > 0) scheduleRefresh(2500);
  }

  /** The upload's line in the list: its name, a progress bar, and what is happening to it. */
  function uploadItem(file) {
    const bar = h("progress", { max: "100", value: "0", "aria-label": `Uploading ${file.name}` });
    const note = h("span", { class: "hint" }, "Waiting to upload");
    const item = h("li", {}, h("span", { class: "name" }, file.name), bar, note);
    uploads.append(item);
    return { file, item, bar, note, attempt: 0 };
  }

  function enqueue(job) {
    job.note.textContent = "Waiting to upload";
    job.note.classList.remove("error-text");
    waiting.push(job);
    pump();
  }

  function pump() {
    while (sending < MAX_PARALLEL_UPLOADS && waiting.length > 0) {
      const job = waiting.shift();
      sending += 1;
      send(job).finally(() => {
        sending -= 1;
        pump();
        scheduleRefresh(500);
      });
    }
  }

  /** Sends one upload until it is stored, refused for good, or out of attempts. */
  async function send(job) {
    for (;;) {
      job.attempt += 1;
      const { status, body, retryAfterS } = await post(job);
      if (status === 200) {
        job.bar.value = 100;
        job.note.textContent = "Uploaded; reading it now";
        say(`Uploaded “${job.file.name}”.`);
        setTimeout(() => job.item.remove(), 3000);
        return;
      }
      // The rate limit, for a moment: wait as asked, then again. (A 429 for the monthly quota asks
      // to wait until next month: that one is a failure to show.)
      const busy = status === 429 && retryAfterS !== null && retryAfterS <= 60;
      if (busy && job.attempt < MAX_ATTEMPTS && !stopped) {
        job.bar.value = 0;
        job.note.textContent = `Busy; trying again in ${Math.ceil(retryAfterS)} s`;
        await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000 + Math.random() * 250));
        continue;
      }
      failed(job, status === 0 ? "The upload was cut off." : detailOf(body, status));
      return;
    }
  }

  function failed(job, reason) {
    job.note.textContent = `Failed: ${reason}`;
    job.note.classList.add("error-text");
    job.item.classList.add("failed");
    const again = h(
      "button",
      {
        type: "button",
        class: "secondary small",
        "aria-label": `Try uploading ${job.file.name} again`,
        onclick: () => {
          again.remove();
          job.item.classList.remove("failed");
          job.attempt = 0;
          enqueue(job);
        },
      },
      "Try again",
    );
    job.item.append(again);
    say(`The upload of “${job.file.name}” failed: ${reason}`);
  }

  /** One POST of the file, with progress (XMLHttpRequest reports upload progress; fetch does not). */
  function post(job) {
    return new Promise((resolve) => {
      const request = new XMLHttpRequest();
      request.open("POST", "/api/files/upload");
      request.setRequestHeader("X-CSRF-Token", session.csrf);
      job.note.textContent = "0%";
      request.upload.addEventListener("progress", (event) => {
        if (!event.lengthComputable) return;
        const percent = Math.round((event.loaded / event.total) * 100);
        job.bar.value = percent;
        // The bytes are out; the answer (stored, or refused) is still to come.
        job.note.textContent = percent < 100 ? `${percent}%` : "Sent; waiting for Locus";
      });
      request.addEventListener("load", () => {
        let body = null;
        try {
          body = JSON.parse(request.responseText);
        } catch {
          // not JSON: the status says enough
        }
        resolve({
          status: request.status,
          body,
          retryAfterS: retryAfterSeconds(request.getResponseHeader("Retry-After")),
        });
      });
      request.addEventListener("error", () => resolve({ status: 0, body: null, retryAfterS: null }));
      const form = new FormData();
      form.append("file", job.file, job.file.name);
      request.send(form);
    });
  }

  view(
    "Files",
    h("section", { class: "card" }, h("h2", {}, "Upload"), drop, input, uploads),
    error,
    h("h2", {}, "Your files"),
    table,
  );
  // After view(), which stops the view before this one.
  leaveView = () => {
    stopped = true;
    clearTimeout(timer);
  };
  const files = await load();
  if (files.some((f) => !FINISHED.has(f.status))) scheduleRefresh(2500);
}

// ---------------------------------------------------------------------------------------------
// Preview: a file shown at a place (a PDF at its page with the matched lines marked, a recording
// at its second beside its transcript)

const previewDialog = document.getElementById("preview");
const previewBody = document.getElementById("preview-body");
/** Counts previews opened and closed: what a preview still loading draws only if it is current. */
let previewTicket = 0;
document.getElementById("preview-close").addEventListener("click", () => previewDialog.close());
previewDialog.addEventListener("close", () => {
  previewTicket += 1;
  previewBody.replaceChildren();
});

/** The most passages of a transcript shown (fetched 500 at a time). */
const MAX_TRANSCRIPT_PASSAGES = 2000;

let pdfjs;
async function loadPdfJs() {
  if (!pdfjs) {
    pdfjs = await import("/dashboard/vendor/pdfjs/pdf.min.mjs");
    pdfjs.GlobalWorkerOptions.workerSrc = "/dashboard/vendor/pdfjs/pdf.worker.min.mjs";
  }
  return pdfjs;
}

/**
 * Opens a file at `locator` (null: at its start). `found` is the search result that led there
 * ({content, highlights}), when there is one: its words are marked in a recording's transcript.
 */
async function openPreview(file, locator, found = null) {
  const ticket = ++previewTicket;
  const current = () => ticket === previewTicket;
  document.getElementById("preview-title").textContent = file.original_name;
  document.getElementById("preview-where").textContent = locator
    ? `Found at: ${describeLocator(locator)}`
    : "";
  previewBody.replaceChildren(h("p", { class: "muted" }, "Loading the preview…"));
  if (!previewDialog.open) previewDialog.showModal();
  let link;
  try {
    link = await api(`/api/files/${encodeURIComponent(file.id)}/preview-url`);
  } catch (err) {
    if (current()) previewBody.replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
    return;
  }
  if (!current()) return;
  const type = file.file_type;
  if (type === "pdf") await showPdf(link.url, locator, current);
  else if (type === "image") showImage(link.url, locator);
  else showRecording(file, type, link.url, locator, found, current);
}

/** A fraction as a CSS percentage. */
const percent = (fraction) => `${(fraction * 100).toFixed(4)}%`;

async function showPdf(url, locator, current) {
  const startPage = locator?.page ?? 1;
  const canvas = h("canvas", { class: "page", "aria-label": "PDF page" });
  // The matched lines' box (PDF points from the page's top-left corner), on the result's page only.
  const bbox = locator?.page !== undefined ? locator.bbox : undefined;
  const mark = bbox ? h("div", { class: "highlight text-mark", "aria-hidden": "true", hidden: true }) : null;
  const sheet = h("div", { class: "page-frame" }, canvas, mark);
  const status = h("span", { id: "pdf-page", "aria-live": "polite" });
  const previous = h("button", { type: "button", class: "secondary small" }, "Previous page");
  const next = h("button", { type: "button", class: "secondary small" }, "Next page");
  const open = h(
    "a",
    { href: `${url}#page=${startPage}`, target: "_blank", rel: "noopener" },
    "Open the PDF",
  );
  previewBody.replaceChildren(h("div", { class: "pager" }, previous, status, next, open), sheet);
  let doc;
  try {
    const lib = await loadPdfJs();
    doc = await lib.getDocument({ url }).promise;
  } catch {
    // A store that does not allow this origin to fetch (S3 without CORS): the browser's own viewer.
    if (current()) {
      previewBody.replaceChildren(
        h("iframe", { src: `${url}#page=${startPage}`, title: "PDF preview", class: "frame" }),
      );
    }
    return;
  }
  if (!current()) {
    doc.destroy();
    return;
  }
  let shown = Math.min(Math.max(1, startPage), doc.numPages);
  let rendering = null;
  let scrolled = false;
  async function draw() {
    const wanted = shown;
    rendering?.cancel();
    const page = await doc.getPage(wanted);
    // Another page was asked for meanwhile, or the preview closed: that draw wins.
    if (wanted !== shown || !current()) return;
    const size = page.getViewport({ scale: 1 });
    const width = Math.min(previewBody.clientWidth || 800, 900);
    const viewport = page.getViewport({ scale: width / size.width });
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    const task = page.render({ canvasContext: canvas.getContext("2d"), viewport });
    rendering = task;
    status.textContent = `Page ${wanted} of ${doc.numPages}`;
    canvas.setAttribute("aria-label", `Page ${wanted} of ${doc.numPages}`);
    previous.disabled = wanted <= 1;
    next.disabled = wanted >= doc.numPages;
    if (mark) {
      // In fractions of the page, so the box follows the canvas at whatever width it is shown.
      mark.hidden = wanted !== locator.page;
      Object.assign(mark.style, {
        left: percent(bbox.x / size.width),
        top: percent(bbox.y / size.height),
        width: percent(bbox.width / size.width),
        height: percent(bbox.height / size.height),
      });
      if (!mark.hidden && !scrolled) {
        scrolled = true;
        // Only when it is out of sight: the dialog's head stays in view when it can.
        const box = mark.getBoundingClientRect();
        const frame = previewDialog.getBoundingClientRect();
        if (box.top < frame.top || box.bottom > Math.min(frame.bottom, window.innerHeight)) {
          mark.scrollIntoView({ block: "center" });
        }
      }
    }
    try {
      await task.promise;
    } catch (err) {
      // Cancelled by a newer draw: not an error.
      if (err?.name !== "RenderingCancelledException") throw err;
    }
  }
  previous.addEventListener("click", () => {
    shown -= 1;
    draw();
  });
  next.addEventListener("click", () => {
    shown += 1;
    draw();
  });
  await draw();
}

function showImage(url, locator) {
  const img = h("img", { src: url, alt: "The uploaded image", class: "image" });
  const frame = h("div", { class: "image-frame" }, img);
  if (locator?.bbox) {
    // The OCR box of the match, in the image's pixels: scaled with the image as it is drawn.
    const box = h("div", { class: "highlight", "aria-hidden": "true" });
    frame.append(box);
    const place = () => {
      const scale = img.clientWidth / img.naturalWidth;
      Object.assign(box.style, {
        left: `${locator.bbox.x * scale}px`,
        top: `${locator.bbox.y * scale}px`,
        width: `${locator.bbox.width * scale}px`,
        height: `${locator.bbox.height * scale}px`,
      });
    };
    img.addEventListener("load", place);
  }
  previewBody.replaceChildren(frame);
}

function showRecording(file, type, url, locator, found, current) {
  let startAt = locator?.timestamp ?? 0;
  const media = h(type === "video" ? "video" : "audio", {
    controls: true,
    preload: "metadata",
    src: url,
    class: type,
    "aria-label": `${type === "video" ? "Video" : "Recording"}: ${file.original_name}`,
  });
  media.addEventListener("loadedmetadata", () => {
    media.currentTime = startAt;
  });
  const note = h("p", { class: "muted", "aria-live": "polite" }, "Loading the transcript…");
  const list = h("ol", { class: "transcript", "aria-labelledby": "transcript-title", hidden: true });
  previewBody.replaceChildren(
    h(
      "div",
      { class: "recording" },
      h(
        "div",
        { class: "player" },
        media,
        h("p", { class: "muted", id: "media-start" }, `Starts at ${formatSeconds(startAt)}`),
      ),
      h(
        "section",
        { class: "transcript-panel" },
        h("h3", { id: "transcript-title" }, "Transcript"),
        note,
        list,
      ),
    ),
  );

  function seek(seconds) {
    startAt = seconds;
    // Before the metadata is in, the time is kept as where playback starts.
    media.currentTime = seconds;
  }

  loadTranscript(file.id, list)
    .then(({ passages, cut }) => {
      if (!current()) return;
      if (passages.length === 0) {
        note.textContent = "No words were found in this recording.";
        return;
      }
      const at = passageAt(passages, locator, found);
      list.replaceChildren(
        ...passages.map((passage, i) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                type: "button",
                class: "passage",
                "aria-current": i === at ? "true" : undefined,
                onclick: () => seek(passage.locator.timestamp),
              },
              h("span", { class: "visually-hidden" }, "Play from "),
              h("span", { class: "passage-time" }, formatSeconds(passage.locator.timestamp)),
              passage.locator.source === "screen"
                ? h("span", { class: "passage-source" }, "on screen")
                : null,
              h("span", { class: "visually-hidden" }, ": "),
              h(
                "span",
                { class: "passage-text" },
                i === at && found?.content === passage.content
                  ? withMarks(passage.content, found.highlights)
                  : passage.content,
              ),
              i === at ? h("span", { class: "visually-hidden" }, " (the result)") : null,
            ),
          ),
        ),
      );
      list.hidden = false;
      note.textContent = cut
        ? `The first ${passages.length} passages; the rest is not shown.`
        : `${passages.length} passage${passages.length === 1 ? "" : "s"}; choose one to play from there.`;
      if (at >= 0) {
        // Within the list only: the player stays where it is.
        const item = list.children[at];
        list.scrollTop = item.offsetTop - (list.clientHeight - item.offsetHeight) / 2;
      }
    })
    .catch((err) => {
      if (!current()) return;
      note.textContent =
        err instanceof ApiError && err.status === 409
          ? "The transcript can be read once the file is ready."
          : `The transcript could not be loaded: ${err.message}`;
    });
}

/**
 * A recording's passages with a time, in time order: all pages of /passages (as far as
 * MAX_TRANSCRIPT_PASSAGES). `cut` tells whether there were more.
 */
async function loadTranscript(fileId, list) {
  const passages = [];
  let offset = 0;
  while (offset !== null && passages.length < MAX_TRANSCRIPT_PASSAGES) {
    const limit = Math.min(500, MAX_TRANSCRIPT_PASSAGES - passages.length);
    const page = await api(
      `/api/files/${encodeURIComponent(fileId)}/passages?offset=${offset}&limit=${limit}`,
    );
    passages.push(...page.passages);
    offset = page.next_offset;
    // Closed meanwhile: no more requests.
    if (!list.isConnected) break;
  }
  const timed = passages
    .map((passage, order) => ({ passage, order }))
    .filter(({ passage }) => typeof passage.locator?.timestamp === "number")
    // What is said and what is shown (a video's) interleaved by time; the same time keeps its order.
    .sort((a, b) => a.passage.locator.timestamp - b.passage.locator.timestamp || a.order - b.order)
    .map(({ passage }) => passage);
  return { passages: timed, cut: offset !== null };
}

/**
 * The passage a result points to: the one with the result's words and time if there is one,
 * else the one of its kind (speech or screen) whose span holds the middle of the result's time
 * (the nearest such). -1 when there is no result, or no time.
 */
function passageAt(passages, locator, found) {
  if (typeof locator?.timestamp !== "number") return -1;
  const from = locator.timestamp;
  const to = locator.timestamp_end ?? from;
  const middle = (from + to) / 2;
  const sameKind = (p) => !locator.source || p.locator.source === locator.source;
  const endOf = (p) => p.locator.timestamp_end ?? p.locator.timestamp;
  const exact = passages.findIndex(
    (p) =>
      sameKind(p) && found?.content === p.content && p.locator.timestamp <= to + 1 && endOf(p) >= from - 1,
  );
  if (exact >= 0) return exact;
  let best = -1;
  let bestDistance = Infinity;
  passages.forEach((p, i) => {
    if (!sameKind(p)) return;
    const holds = p.locator.timestamp <= middle && middle <= endOf(p);
    // Holding the middle comes first; then the nearer the passage's own middle, the better.
    const distance = (holds ? 0 : 1e9) + Math.abs((p.locator.timestamp + endOf(p)) / 2 - middle);
    if (distance < bestDistance) {
      best = i;
      bestDistance = distance;
    }
  });
  return best;
}

// ---------------------------------------------------------------------------------------------
// Search playground

async function searchView() {
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
          const body = await api(`/api/search?${params}`);
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
      // Markers become links to the cited result's place; the rest stays text.
      for (const piece of body.summary.split(/(\[\d+\])/)) {
        const marker = /^\[(\d+)\]$/.exec(piece);
        const citation = marker && body.citations.find((c) => c.n === Number(marker[1]));
        if (citation) {
          summary.append(
            h(
              "button",
              {
                type: "button",
                class: "cite",
                "aria-label": `Source ${citation.n}: ${body.citations
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

// ---------------------------------------------------------------------------------------------
// Usage

async function usageView() {
  const usage = await api("/dashboard/api/usage");
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

// ---------------------------------------------------------------------------------------------
// Routing

const ROUTES = { "#/keys": keysView, "#/files": filesView, "#/search": searchView, "#/usage": usageView };

async function route() {
  if (previewDialog.open) previewDialog.close();
  const hash = location.hash || "#/files";
  if (hash === "#/signin" || hash === "#/signup") {
    if (session) return go("#/files");
    return accountView(hash === "#/signup" ? "signup" : "signin");
  }
  if (!session) return go("#/signin");
  const draw = ROUTES[hash] ?? filesView;
  try {
    await draw();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) {
      view("Something went wrong", h("p", { class: "error", role: "alert" }, err.message));
    }
  }
}

window.addEventListener("hashchange", route);

(async () => {
  try {
    session = await api("/dashboard/api/session");
  } catch {
    session = null;
  }
  signedInChrome();
  await route();
})();
