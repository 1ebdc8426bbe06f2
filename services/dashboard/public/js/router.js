// @ts-check
// Going to a view by the URL's hash. main.js says what draws the hash's view; the views and the API
// client go somewhere through here without importing main.js.

/** @type {() => Promise<void>} */
let route = () => Promise.resolve();

/**
 * What draws the view of the current hash (on hashchange, and by go() when the hash stays).
 * @param {() => Promise<void>} draw
 */
export function onNavigate(draw) {
  route = draw;
}

/**
 * Goes to `hash`: draws its view again when the page is already there.
 * @param {string} hash
 */
export function go(hash) {
  if (location.hash === hash) void route();
  else location.hash = hash;
}

/**
 * The view part of a hash: "#/search" of "#/search?q=tides&mode=quick".
 * @param {string} hash
 */
export const viewOf = (hash) => hash.split("?")[0] ?? hash;

/** What the current hash carries after its "?" (a view's state, such as a search's query). */
export function hashParams() {
  const at = location.hash.indexOf("?");
  return new URLSearchParams(at < 0 ? "" : location.hash.slice(at + 1));
}

/**
 * Puts a view's state in the URL (a new history entry, or in place of the current one), without
 * drawing the view again: a reload or a shared link then opens the same state.
 * @param {string} hash
 * @param {{ replace?: boolean }} [options]
 */
export function showInUrl(hash, { replace = false } = {}) {
  if (location.hash === hash) return;
  if (replace) window.history.replaceState(null, "", hash);
  else window.history.pushState(null, "", hash);
}

/**
 * Where a signed-out visitor was going (a shared link), to go there once signed in.
 * @type {string | null}
 */
let wanted = null;

/** @param {string} hash */
export function rememberWanted(hash) {
  wanted = hash;
}

/**
 * The remembered place, once (or `fallback`).
 * @param {string} fallback
 */
export function takeWanted(fallback) {
  const hash = wanted ?? fallback;
  wanted = null;
  return hash;
}
