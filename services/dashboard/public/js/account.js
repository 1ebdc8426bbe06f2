// @ts-check
// Signing in and up, and out; the page's head shows who is signed in.
import { currentSession, enter, setSession, signOut } from "./api.js";
import { showMenu } from "./menu.js";
import { go, takeWanted } from "./router.js";
import { byId, errorBox, h, say, showError, view } from "./ui.js";

const nav = byId("nav", HTMLElement);
const who = byId("who", HTMLElement);
const notices = byId("notices", HTMLElement);

/** @param {"signin" | "signup"} mode */
export function accountView(mode) {
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
          setSession(
            await enter(signingUp ? "signup" : "signin", { email: email.value, password: password.value }),
          );
          signedInChrome();
          go(takeWanted("#/keys"));
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
  view(
    signingUp ? "Create your Locus account" : "Sign in to Locus",
    h("div", { class: "welcome" }, intro(), form),
  );
}

/** The first screen's word on what Locus is, beside the form, for whoever arrives signed out. */
function intro() {
  return h(
    "section",
    { class: "intro", "aria-labelledby": "intro-title" },
    h("h2", { id: "intro-title" }, "Search what your files say"),
    h(
      "p",
      {},
      "Locus is a document search service. Upload PDFs, office documents, images, recordings and videos; Locus reads them " +
        "(their text, by OCR, and what is said) and answers searches with the passage and exactly where it is.",
    ),
    h(
      "ul",
      {},
      h(
        "li",
        {},
        "Every result points to its place: page and line in a document, the second in a recording.",
      ),
      h("li", {}, "Search by keyword, or by meaning with a short answer that cites its sources."),
      h("li", {}, "A REST API with keys you make here; test keys answer at once and store nothing."),
    ),
  );
}

/** The navigation and who is signed in, shown while signed in only. */
export function signedInChrome() {
  const session = currentSession();
  nav.hidden = !session;
  showMenu(Boolean(session));
  who.textContent = session ? `${session.user.email} (${session.user.plan})` : "";
  // What the server cannot do now (recordings without a speech engine), said before it surprises.
  const said = session?.notices ?? [];
  notices.replaceChildren(...said.map((notice) => h("p", {}, notice)));
  notices.hidden = said.length === 0;
}

/** The Sign out button. */
export async function leave() {
  await signOut().catch(() => undefined);
  setSession(null);
  signedInChrome();
  go("#/signin");
  say("Signed out.");
}
