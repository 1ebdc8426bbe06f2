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
