// @ts-check
// The page's head on a phone: the brand, the current view's name and a Menu button that shows the
// navigation as a panel below the head (a disclosure: the button's aria-expanded is the one record
// of whether the panel is open, and styles.css shows the panel from it). On a wider screen the
// button is not shown and the links stay in the head's row, whatever aria-expanded says.

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function element(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`The page has no #${id} of the expected kind.`);
  return found;
}

const toggle = element("menu-toggle", HTMLButtonElement);
const current = element("nav-current", HTMLElement);
const nav = element("nav", HTMLElement);
const head = /** @type {HTMLElement} */ (toggle.parentElement);

const isOpen = () => toggle.getAttribute("aria-expanded") === "true";

/**
 * Closes the panel; `refocus` puts focus back on the Menu button (Escape, or a choice that leaves
 * the view as it is), so the keyboard is not left on a link the panel just hid.
 * @param {{ refocus?: boolean }} [options]
 */
export function closeMenu({ refocus = false } = {}) {
  if (!isOpen()) return;
  toggle.setAttribute("aria-expanded", "false");
  if (refocus) toggle.focus();
}

/**
 * Shows the Menu button and the view's name while signed in (the navigation is for signed-in people).
 * @param {boolean} signedIn
 */
export function showMenu(signedIn) {
  closeMenu();
  toggle.hidden = !signedIn;
  current.hidden = !signedIn;
}

/**
 * The current view's name beside the brand (the same words as its link).
 * @param {string} name
 */
export function showCurrent(name) {
  current.textContent = name;
}

toggle.addEventListener("click", () => {
  toggle.setAttribute("aria-expanded", String(!isOpen()));
});

// Choosing a link or Sign out closes the panel. A link to the view already shown changes nothing, so
// focus goes back to the button; any other link draws its view, which focuses its heading.
nav.addEventListener("click", (event) => {
  const chosen = event.target instanceof Element ? event.target.closest("a, button") : null;
  if (!chosen || !isOpen()) return;
  const sameView = chosen instanceof HTMLAnchorElement && chosen.getAttribute("href") === location.hash;
  closeMenu({ refocus: sameView });
});

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && isOpen()) {
    event.preventDefault();
    closeMenu({ refocus: true });
  }
});

// A press anywhere outside the head closes it, as does focus moving on past the panel's last item.
document.addEventListener("pointerdown", (event) => {
  if (isOpen() && event.target instanceof Node && !head.contains(event.target)) closeMenu();
});
head.addEventListener("focusout", (event) => {
  const next = event.relatedTarget;
  if (isOpen() && next instanceof Node && !head.contains(next)) closeMenu();
});

// Back or forward to another view while the panel is open.
window.addEventListener("hashchange", () => closeMenu());
