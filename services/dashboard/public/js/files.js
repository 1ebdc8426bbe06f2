// @ts-check
// Files: upload (two at a time, with progress, a rate-limit refusal waited out), the list (looked at
// again while anything is still being read), preview and delete.
import { ApiError, deleteFile, detailOf, listFiles, uploadFile } from "./api.js";
import { formatBytes, formatDate, formatSeconds } from "./format.js";
import { openPreview } from "./preview.js";
import { confirmedDelete, errorBox, h, onLeave, say, view } from "./ui.js";

/** @typedef {import("@locus/contracts").FileRecordDto} FileRecordDto */

/**
 * An upload on its way: the file, its line in the list and the tries so far.
 * @typedef {object} UploadJob
 * @property {File} file
 * @property {HTMLLIElement} item
 * @property {HTMLProgressElement} bar
 * @property {HTMLSpanElement} note
 * @property {number} attempt
 */

/** @type {ReadonlySet<string>} */
const FINISHED = new Set(["ready", "failed"]);

/**
 * What the upload said about the file (its metadata), under its name: one `key: value` each, a
 * list's items joined; nothing when it said nothing.
 * @param {FileRecordDto} file
 */
function metadataList(file) {
  const entries = Object.entries(file.metadata ?? {});
  if (entries.length === 0) return null;
  return h(
    "ul",
    { class: "metadata", "aria-label": `Metadata of ${file.original_name}` },
    ...entries.map(([key, value]) =>
      h("li", {}, `${key}: ${Array.isArray(value) ? value.join(", ") : String(value)}`),
    ),
  );
}

export async function filesView() {
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
      "PDF, images (PNG, JPEG, WebP, TIFF, GIF, BMP), audio, video, office documents (Word, " +
        "PowerPoint, Excel, OpenDocument, RTF) and text (TXT, Markdown, HTML).",
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
    if (event.dataTransfer) uploadAll(event.dataTransfer.files);
  });
  input.addEventListener("change", () => {
    if (input.files) uploadAll(input.files);
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
          ...["Name", "Type", "Status", "Size", "Pages", "Duration", "Passages", "Uploaded", ""].map((t) =>
            h("th", { scope: "col" }, t),
          ),
        ),
      ),
      tbody,
    ),
  );

  // The list: loaded now, and looked at again while anything is still being read. Every look is a
  // request against the account's rate limit (5 a second on the free plan), shared with uploads:
  // it looks every few seconds, only while something moves, and after a refusal it waits what the
  // server said (or a little longer each time) instead of stopping for good.
  /** @type {number | undefined} */
  let timer;
  let stopped = false;
  let listFailures = 0;
  async function load() {
    const files = await listFiles();
    tbody.replaceChildren(
      ...(files.length === 0
        ? [h("tr", {}, h("td", { colspan: "9" }, "No files yet: upload one above."))]
        : files.map(fileRow)),
    );
    return files;
  }
  /** @param {number} ms */
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
      const wait = (err instanceof ApiError ? err.retryAfterS : null) ?? Math.min(30, 2 ** listFailures);
      scheduleRefresh(Math.max(1000, wait * 1000));
    }
  }
  /** @param {FileRecordDto} file */
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
      h("td", { "data-label": "Name", class: "wrap-anywhere" }, file.original_name, metadataList(file)),
      h("td", { "data-label": "Type" }, file.file_type),
      h(
        "td",
        { "data-label": "Status" },
        status,
        file.status === "failed" && file.error ? h("div", { class: "hint" }, file.error.message) : null,
      ),
      h("td", { "data-label": "Size" }, formatBytes(file.size_bytes)),
      // What reading the file found: known once it is read ("—" until then, or where it does not apply).
      h("td", { "data-label": "Pages" }, file.page_count ?? "—"),
      h("td", { "data-label": "Duration" }, file.duration_s === null ? "—" : formatSeconds(file.duration_s)),
      h("td", { "data-label": "Passages" }, file.passage_count ?? "—"),
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
                remove: () => deleteFile(file.id),
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
  /** @type {UploadJob[]} */
  const waiting = [];
  let sending = 0;
  const busyUploads = () => sending + waiting.length;

  /** @param {Iterable<File>} files */
  function uploadAll(files) {
    for (const file of files) enqueue(uploadItem(file));
    if (busyUploads() > 0) scheduleRefresh(2500);
  }

  /**
   * The upload's line in the list: its name, a progress bar, and what is happening to it.
   * @param {File} file
   * @returns {UploadJob}
   */
  function uploadItem(file) {
    const bar = h("progress", { max: "100", value: "0", "aria-label": `Uploading ${file.name}` });
    const note = h("span", { class: "hint" }, "Waiting to upload");
    const item = h("li", {}, h("span", { class: "name" }, file.name), bar, note);
    uploads.append(item);
    return { file, item, bar, note, attempt: 0 };
  }

  /** @param {UploadJob} job */
  function enqueue(job) {
    job.note.textContent = "Waiting to upload";
    job.note.classList.remove("error-text");
    waiting.push(job);
    pump();
  }

  function pump() {
    while (sending < MAX_PARALLEL_UPLOADS && waiting.length > 0) {
      const job = waiting.shift();
      if (!job) break;
      sending += 1;
      void send(job).finally(() => {
        sending -= 1;
        pump();
        scheduleRefresh(500);
      });
    }
  }

  /**
   * Sends one upload until it is stored, refused for good, or out of attempts.
   * @param {UploadJob} job
   */
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

  /**
   * @param {UploadJob} job
   * @param {string} reason
   */
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

  /**
   * One POST of the file, its progress on its line.
   * @param {UploadJob} job
   */
  function post(job) {
    job.note.textContent = "0%";
    return uploadFile(job.file, (percent) => {
      job.bar.value = percent;
      // The bytes are out; the answer (stored, or refused) is still to come.
      job.note.textContent = percent < 100 ? `${percent}%` : "Sent; waiting for Locus";
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
  onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });
  const files = await load();
  if (files.some((f) => !FINISHED.has(f.status))) scheduleRefresh(2500);
}
