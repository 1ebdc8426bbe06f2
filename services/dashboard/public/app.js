// @ts-check
// The Locus dashboard: one page, no build step and no third-party code but pdf.js (served by Locus
// from its npm package). This is the page's entry module; the rest are native modules in js/, each
// with one concern: ui (elements, toast, dialogs, views), format, api (every request, and the
// session), router, menu (the header's Menu button on a phone), and a module per view: account, keys, files, preview, search, usage. Each is
// type-checked from its JSDoc (public/tsconfig.json, part of `pnpm typecheck`). Views are routed by the URL's hash: #/signin, #/signup,
// #/keys, #/files, #/search, #/usage. Files and search go through the public API (/api/...) with
// the session cookie and its CSRF token.
import { accountView, leave, signedInChrome } from "./js/account.js";
import { ApiError, currentSession, getSession, setSession } from "./js/api.js";
import { filesView } from "./js/files.js";
import { keysView } from "./js/keys.js";
import { closePreview } from "./js/preview.js";
import { go, onNavigate, rememberWanted, viewOf } from "./js/router.js";
import { searchView } from "./js/search.js";
import { byId, h, messageOf, view } from "./js/ui.js";
import { usageView } from "./js/usage.js";
import { webhooksView } from "./js/webhooks.js";

/** @type {Record<string, () => Promise<void> | void>} */
const ROUTES = {
  "#/keys": keysView,
  "#/files": filesView,
  "#/search": searchView,
  "#/usage": usageView,
  "#/webhooks": webhooksView,
};

async function route() {
  closePreview();
  const hash = location.hash || "#/files";
  if (hash === "#/signin" || hash === "#/signup") {
    if (currentSession()) return go("#/files");
    return accountView(hash === "#/signup" ? "signup" : "signin");
  }
  if (!currentSession()) {
    // A shared link opened signed out: there once signed in.
    if (location.hash) rememberWanted(location.hash);
    return go("#/signin");
  }
  const draw = ROUTES[viewOf(hash)] ?? filesView;
  try {
    await draw();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) {
      view("Something went wrong", h("p", { class: "error", role: "alert" }, messageOf(err)));
    }
  }
}

onNavigate(route);
byId("signout", HTMLElement).addEventListener("click", () => void leave());
window.addEventListener("hashchange", () => void route());

void (async () => {
  try {
    setSession(await getSession());
  } catch {
    setSession(null);
  }
  signedInChrome();
  await route();
})();
