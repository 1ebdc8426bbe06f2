// @ts-check
// What every view is drawn with: elements made by DOM calls (text is always set as text, never as
// HTML), the toast, error boxes, the confirmation dialog, and the view in <main>.
import { showCurrent } from "./menu.js";
import { viewOf } from "./router.js";

/** @typedef {string | number | boolean | null | undefined | ((event: Event) => unknown)} AttributeValue */
/** @typedef {Record<string, AttributeValue>} Attributes */
/** @typedef {Node | string | number | false | null | undefined} Leaf */
/** A child, or a list of them (flattened one level). @typedef {Leaf | readonly Leaf[]} Child */

/**
 * The page's element with this id, of this type (the page is broken without it).
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
export function byId(id, type) {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`The page has no #${id} of the expected kind.`);
  return element;
}

const main = byId("main", HTMLElement);
const nav = byId("nav", HTMLElement);
const toast = byId("toast", HTMLDivElement);

/** Stops the current view's timers when another view is drawn. */
let leaveView = () => {};

/**
 * An element with attributes (on* as listeners) and children (strings become text nodes).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) {
      element.addEventListener(name.slice(2).toLowerCase(), /** @type {EventListener} */ (value));
    } else if (name === "class") element.className = String(value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** @type {number | undefined} */
let toastTimer;
/** @param {string} message */
export function say(message) {
  toast.textContent = message;
  toast.classList.add("shown");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => toast.classList.remove("shown"), 4000);
}

/** What went wrong, in words. @param {unknown} err */
export const messageOf = (err) => (err instanceof Error ? err.message : String(err));

export function errorBox() {
  return h("p", { class: "error", role: "alert", hidden: true });
}

/**
 * @param {HTMLElement} box
 * @param {unknown} err
 */
export function showError(box, err) {
  box.textContent = messageOf(err);
  box.hidden = false;
}

/**
 * A modal question; resolves true when confirmed.
 * @param {string} title
 * @param {string} text
 * @param {string} okLabel
 * @returns {Promise<boolean>}
 */
export function confirmWith(title, text, okLabel) {
  const dialog = byId("confirm", HTMLDialogElement);
  byId("confirm-title", HTMLElement).textContent = title;
  byId("confirm-text", HTMLElement).textContent = text;
  byId("confirm-ok", HTMLElement).textContent = okLabel;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}

/**
 * Asks first; then deletes, says it is done and redraws, or shows why it failed.
 * @param {object} what
 * @param {string} what.title
 * @param {string} what.text
 * @param {string} what.ok The confirming button's label.
 * @param {() => Promise<unknown>} what.remove The DELETE request.
 * @param {string} what.done
 * @param {() => Promise<unknown>} what.reload
 * @param {HTMLElement} what.error
 */
export async function confirmedDelete({ title, text, ok, remove, done, reload, error }) {
  if (!(await confirmWith(title, text, ok))) return;
  try {
    await remove();
    say(done);
    await reload();
  } catch (err) {
    showError(error, err);
  }
}

/**
 * Draws a view in <main> under its heading, after stopping the one before.
 * @param {string} title
 * @param {...(Node | string)} content
 */
export function view(title, ...content) {
  leaveView();
  leaveView = () => {};
  document.title = `${title} · Locus dashboard`;
  const heading = h("h1", { tabindex: "-1" }, title);
  main.replaceChildren(heading, ...content);
  heading.focus();
  let currentName = "";
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === viewOf(location.hash)) {
      link.setAttribute("aria-current", "page");
      currentName = link.textContent ?? "";
    } else link.removeAttribute("aria-current");
  }
  showCurrent(currentName);
}

/**
 * What stops the view just drawn (its timers) when another one is drawn: set after view().
 * @param {() => void} stop
 */
export function onLeave(stop) {
  leaveView = stop;
}
