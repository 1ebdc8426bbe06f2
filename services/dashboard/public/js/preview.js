// @ts-check
// Preview: a file shown at a place (a PDF at its page with the matched lines marked, an office
// document's PDF rendition the same way, a text document's passages at the matched lines, an image
// with the match's box, a recording at its second beside its transcript), in the #preview dialog.
import { ApiError, filePassages, previewUrl } from "./api.js";
import { describeLocator, formatSeconds, withMarks } from "./format.js";
import { byId, h, messageOf } from "./ui.js";

/** @typedef {import("@locus/contracts").Locator} Locator */
/** @typedef {import("@locus/contracts").FileRecordDto} FileRecordDto */
/** @typedef {import("@locus/contracts").FilePassagesDto} FilePassagesDto */
/** @typedef {import("@locus/contracts").SearchResultDto} SearchResultDto */
/** @typedef {typeof import("pdfjs-dist")} PdfJs */
/** @typedef {import("pdfjs-dist").PDFDocumentProxy} PDFDocumentProxy */
/** @typedef {import("pdfjs-dist").RenderTask} RenderTask */
/** What a preview needs of a file. @typedef {Pick<FileRecordDto, "id" | "original_name" | "file_type">} PreviewFile */
/** @typedef {FilePassagesDto["passages"][number]} Passage */
/** A passage with a time (a recording's). @typedef {Passage & { locator: { timestamp: number } }} TimedPassage */
/** The search result a preview was opened from, when it was. @typedef {SearchResultDto | null} Found */

const previewDialog = byId("preview", HTMLDialogElement);
const previewBody = byId("preview-body", HTMLElement);
/** Counts previews opened and closed: what a preview still loading draws only if it is current. */
let previewTicket = 0;
byId("preview-close", HTMLElement).addEventListener("click", () => previewDialog.close());
previewDialog.addEventListener("close", () => {
  previewTicket += 1;
  previewBody.replaceChildren();
});

/** The most passages of a transcript shown (fetched 500 at a time). */
const MAX_TRANSCRIPT_PASSAGES = 2000;

/** pdf.js as Locus serves it: its npm package, pdfjs-dist, whose types these are. */
const PDFJS_URL = "/dashboard/vendor/pdfjs/pdf.min.mjs";
/**
 * A URL TypeScript cannot follow: the import is typed here.
 * @type {() => Promise<PdfJs>}
 */
const importPdfJs = () => import(PDFJS_URL);
/** @type {PdfJs | undefined} */
let pdfjs;
async function loadPdfJs() {
  if (!pdfjs) {
    pdfjs = await importPdfJs();
    pdfjs.GlobalWorkerOptions.workerSrc = "/dashboard/vendor/pdfjs/pdf.worker.min.mjs";
  }
  return pdfjs;
}

/**
 * Opens a file at `locator` (null: at its start). `found` is the search result that led there
 * ({content, highlights}), when there is one: its words are marked in a recording's transcript.
 * @param {PreviewFile} file
 * @param {Locator | null} locator
 * @param {Found} [found]
 */
export async function openPreview(file, locator, found = null) {
  const ticket = ++previewTicket;
  const current = () => ticket === previewTicket;
  byId("preview-title", HTMLElement).textContent = file.original_name;
  byId("preview-where", HTMLElement).textContent = locator ? `Found at: ${describeLocator(locator)}` : "";
  previewBody.replaceChildren(h("p", { class: "muted" }, "Loading the preview…"));
  if (!previewDialog.open) previewDialog.showModal();
  let link;
  try {
    link = await previewUrl(file.id);
  } catch (err) {
    if (current()) previewBody.replaceChildren(h("p", { class: "error", role: "alert" }, messageOf(err)));
    return;
  }
  if (!current()) return;
  const type = file.file_type;
  if (type === "pdf") await showPdf(link.url, locator, current);
  else if (type === "image") showImage(link.url, locator);
  // An office document shows the PDF it was converted to, which its pages and lines count in.
  else if (type === "document" && link.original_url)
    await showPdf(link.url, locator, current, link.original_url);
  else if (type === "document") showText(file, link.url, locator, found, current);
  else showRecording(file, type, link.url, locator, found, current);
}

/** A fraction as a CSS percentage. @param {number} fraction */
const percent = (fraction) => `${(fraction * 100).toFixed(4)}%`;

/**
 * @param {string} url
 * @param {Locator | null} locator
 * @param {() => boolean} current
 * @param {string} [originalUrl] The original's bytes, when the PDF is an office document's rendition.
 */
async function showPdf(url, locator, current, originalUrl) {
  const startPage = locator?.page ?? 1;
  const canvas = h("canvas", { class: "page", "aria-label": "PDF page" });
  // The matched lines' box (PDF points from the page's top-left corner), on the result's page only.
  const resultPage = locator?.page;
  const bbox = resultPage !== undefined ? locator?.bbox : undefined;
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
  const original = originalUrl
    ? h("a", { href: originalUrl, rel: "noopener", download: "" }, "Download the original")
    : null;
  previewBody.replaceChildren(h("div", { class: "pager" }, previous, status, next, open, original), sheet);
  /** @type {PDFDocumentProxy} */
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
    void doc.destroy();
    return;
  }
  let shown = Math.min(Math.max(1, startPage), doc.numPages);
  /** @type {RenderTask | null} */
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
    // The canvas named as well as its context: what pdf.js takes as the canvas when not named.
    const task = page.render({ canvas, canvasContext: canvas.getContext("2d") ?? undefined, viewport });
    rendering = task;
    status.textContent = `Page ${wanted} of ${doc.numPages}`;
    canvas.setAttribute("aria-label", `Page ${wanted} of ${doc.numPages}`);
    previous.disabled = wanted <= 1;
    next.disabled = wanted >= doc.numPages;
    if (mark && bbox) {
      // In fractions of the page, so the box follows the canvas at whatever width it is shown.
      mark.hidden = wanted !== resultPage;
      Object.assign(mark.style, {
        left: percent(bbox.x / size.width),
        top: percent(bbox.y / size.height),
        width: percent(bbox.width / size.width),
        height: percent(bbox.height / size.height),
      });
      if (!mark.hidden && !scrolled) {
        scrolled = true;
        // Only when it is out of sight in the scrolling body (the head and page controls stay put).
        const box = mark.getBoundingClientRect();
        const frame = previewBody.getBoundingClientRect();
        if (box.top < frame.top || box.bottom > Math.min(frame.bottom, window.innerHeight)) {
          mark.scrollIntoView({ block: "center" });
        }
      }
    }
    try {
      await task.promise;
    } catch (err) {
      // Cancelled by a newer draw: not an error.
      if (
        /** @type {{ name?: unknown } | null | undefined} */ (err)?.name !== "RenderingCancelledException"
      ) {
        throw err;
      }
    }
  }
  previous.addEventListener("click", () => {
    shown -= 1;
    void draw();
  });
  next.addEventListener("click", () => {
    shown += 1;
    void draw();
  });
  await draw();
}

/**
 * @param {string} url
 * @param {Locator | null} locator
 */
function showImage(url, locator) {
  const img = h("img", { src: url, alt: "The uploaded image", class: "image" });
  const frame = h("div", { class: "image-frame" }, img);
  const bbox = locator?.bbox;
  if (bbox) {
    // The OCR box of the match, in the image's pixels: scaled with the image as it is drawn.
    const box = h("div", { class: "highlight", "aria-hidden": "true" });
    frame.append(box);
    const place = () => {
      const scale = img.clientWidth / img.naturalWidth;
      Object.assign(box.style, {
        left: `${bbox.x * scale}px`,
        top: `${bbox.y * scale}px`,
        width: `${bbox.width * scale}px`,
        height: `${bbox.height * scale}px`,
      });
    };
    img.addEventListener("load", place);
  }
  previewBody.replaceChildren(frame);
}

/**
 * @param {PreviewFile} file
 * @param {"audio" | "video"} type
 * @param {string} url
 * @param {Locator | null} locator
 * @param {Found} found
 * @param {() => boolean} current
 */
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

  /** @param {number} seconds */
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
      const item = at >= 0 ? list.children[at] : undefined;
      if (item instanceof HTMLElement) {
        // Within the list only: the player stays where it is.
        list.scrollTop = item.offsetTop - (list.clientHeight - item.offsetHeight) / 2;
      }
    })
    .catch((err) => {
      if (!current()) return;
      note.textContent =
        err instanceof ApiError && err.status === 409
          ? "The transcript can be read once the file is ready."
          : `The transcript could not be loaded: ${messageOf(err)}`;
    });
}

/**
 * A text, Markdown or HTML document: its passages in reading order, each with its lines, the
 * result's passage marked and scrolled to.
 * @param {PreviewFile} file
 * @param {string} url
 * @param {Locator | null} locator
 * @param {Found} found
 * @param {() => boolean} current
 */
function showText(file, url, locator, found, current) {
  const note = h("p", { class: "muted", "aria-live": "polite" }, "Loading the text…");
  const list = h("ol", { class: "transcript", "aria-labelledby": "text-title", hidden: true });
  previewBody.replaceChildren(
    h(
      "section",
      { class: "transcript-panel" },
      h("h3", { id: "text-title" }, "Text"),
      h("p", {}, h("a", { href: url, target: "_blank", rel: "noopener" }, `Open ${file.original_name}`)),
      note,
      list,
    ),
  );
  loadPassages(file.id, list)
    .then(({ passages, cut }) => {
      if (!current()) return;
      if (passages.length === 0) {
        note.textContent = "No text was found in this document.";
        return;
      }
      const line = locator?.line;
      const at =
        line === undefined
          ? -1
          : Math.max(
              passages.findIndex((p) => p.content === found?.content && p.locator.line === line),
              passages.findIndex((p) => (p.locator.line ?? 0) <= line && line <= (p.locator.line_end ?? 0)),
            );
      list.replaceChildren(
        ...passages.map((passage, i) =>
          h(
            "li",
            { class: "passage", "aria-current": i === at ? "true" : undefined },
            h("span", { class: "passage-time" }, describeLocator(passage.locator)),
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
      );
      list.hidden = false;
      note.textContent = cut
        ? `The first ${passages.length} passages; the rest is not shown.`
        : `${passages.length} passage${passages.length === 1 ? "" : "s"}.`;
      const item = at >= 0 ? list.children[at] : undefined;
      if (item instanceof HTMLElement)
        list.scrollTop = item.offsetTop - (list.clientHeight - item.offsetHeight) / 2;
    })
    .catch((err) => {
      if (!current()) return;
      note.textContent =
        err instanceof ApiError && err.status === 409
          ? "The text can be read once the file is ready."
          : `The text could not be loaded: ${messageOf(err)}`;
    });
}

/**
 * @param {Passage} passage
 * @returns {passage is TimedPassage}
 */
const isTimed = (passage) => typeof passage.locator?.timestamp === "number";

/**
 * A file's passages in reading order: all pages of /passages (as far as MAX_TRANSCRIPT_PASSAGES).
 * `cut` tells whether there were more.
 * @param {string} fileId
 * @param {HTMLElement} list Where they are shown: no more requests once it has left the page.
 * @returns {Promise<{ passages: Passage[], cut: boolean }>}
 */
async function loadPassages(fileId, list) {
  /** @type {Passage[]} */
  const passages = [];
  /** @type {number | null} */
  let offset = 0;
  while (offset !== null && passages.length < MAX_TRANSCRIPT_PASSAGES) {
    const limit = Math.min(500, MAX_TRANSCRIPT_PASSAGES - passages.length);
    const page = await filePassages(fileId, offset, limit);
    passages.push(...page.passages);
    offset = page.next_offset;
    // Closed meanwhile: no more requests.
    if (!list.isConnected) break;
  }
  return { passages, cut: offset !== null };
}

/**
 * A recording's passages with a time, in time order (see loadPassages).
 * @param {string} fileId
 * @param {HTMLElement} list
 * @returns {Promise<{ passages: TimedPassage[], cut: boolean }>}
 */
async function loadTranscript(fileId, list) {
  const { passages, cut } = await loadPassages(fileId, list);
  /** @type {{ passage: TimedPassage, order: number }[]} */
  const withTimes = [];
  passages.forEach((passage, order) => {
    if (isTimed(passage)) withTimes.push({ passage, order });
  });
  const timed = withTimes
    // What is said and what is shown (a video's) interleaved by time; the same time keeps its order.
    .sort((a, b) => a.passage.locator.timestamp - b.passage.locator.timestamp || a.order - b.order)
    .map(({ passage }) => passage);
  return { passages: timed, cut };
}

/**
 * The passage a result points to: the one with the result's words and time if there is one,
 * else the one of its kind (speech or screen) whose span holds the middle of the result's time
 * (the nearest such). -1 when there is no result, or no time.
 * @param {TimedPassage[]} passages
 * @param {Locator | null} locator
 * @param {Found} found
 */
function passageAt(passages, locator, found) {
  if (typeof locator?.timestamp !== "number") return -1;
  const from = locator.timestamp;
  const to = locator.timestamp_end ?? from;
  const middle = (from + to) / 2;
  /** @param {TimedPassage} p */
  const sameKind = (p) => !locator.source || p.locator.source === locator.source;
  /** @param {TimedPassage} p */
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

/** Closes the preview, if it is open. */
export function closePreview() {
  if (previewDialog.open) previewDialog.close();
}
