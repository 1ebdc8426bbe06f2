/// <reference lib="dom" />
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import {
  chromium,
  type Browser,
  type BrowserContext,
  type FileChooser,
  type Locator,
  type Page,
} from "playwright-core";
import {
  makePdf,
  makeTextDocument,
  pageWith,
  recording,
  recordResilience,
  REPO_ROOT,
  removeDataDir,
  speak,
  startLocus,
  type LocusProcess,
} from "@locus/testing";

/**
 * The dashboard in a real browser: Debian's Chromium (installed by .ci/packages.sh) driven by
 * playwright-core, against the real server. One person's first day: sign up, make a live key, use
 * it on the API, upload a PDF, watch it turn ready, search, open the result at its page, revoke the
 * key and see the API refuse it. A screenshot of every page goes to test-artifacts/dashboard/.
 */
const ARTIFACTS = join(REPO_ROOT, "test-artifacts", "dashboard");
const EMAIL = `dashboard-${Date.now()}@example.com`;
const PASSWORD = "a long enough passphrase";

let locus: LocusProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let liveKey = "";

/**
 * A screenshot, after checking the page with axe-core (WCAG 2 A and AA rules: labels, contrast,
 * roles, names): any serious or critical violation fails the test.
 */
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
async function shot(name: string, target: Page = page): Promise<void> {
  // A toast fading in or out is half transparent for 0.2 s, and axe would measure the contrast of
  // that moment: check the page when it is at rest (a toast fully shown, or fully gone).
  await target.waitForFunction(
    () => {
      const toast = document.getElementById("toast");
      const opacity = toast ? getComputedStyle(toast).opacity : "0";
      return opacity === "0" || opacity === "1";
    },
    undefined,
    { polling: 50 },
  );
  await target.addScriptTag({ path: AXE });
  const violations = await target.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            options: object,
          ): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run({ runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"] } });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  await target.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/**
 * Focuses a control and presses Enter until a file chooser opens. In headless Chromium the chooser a
 * key press asks for is now and then lost (the press lands before Playwright intercepts choosers,
 * or while focus is still moving), and a chooser that is coming opens within a second: so each try
 * waits 5 s, and only three lost presses in a row fail the test.
 */
async function chooserFromKeyboard(control: Locator): Promise<FileChooser> {
  for (let attempt = 1; ; attempt += 1) {
    await control.focus();
    await expect(control.evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    try {
      const [chooser] = await Promise.all([
        page.waitForEvent("filechooser", { timeout: 5_000 }),
        page.keyboard.press("Enter"),
      ]);
      return chooser;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

const api = (path: string, key: string) =>
  fetch(`${locus.baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  locus = await startLocus({ env: { LOCUS_RATE_LIMIT_FREE: "100" } });
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    // This machine's network is closed: without these, Chromium keeps trying to reach Google.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  // bypassCSP lets the test inject axe-core; the page itself allows only its own scripts.
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  page = await context.newPage();
  // Any script error on the page fails the run at the end.
  page.on("pageerror", (err) => pageErrors.push(err.message));
}, 180_000);

const pageErrors: string[] = [];

afterAll(async () => {
  await browser?.close();
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
});

it("signs up with an email and a password, and lands on the API keys page", async () => {
  await page.goto(`${locus.baseUrl}/dashboard`);
  await page.getByRole("heading", { name: "Sign in to Locus" }).waitFor();
  // The first screen says what Locus is, before asking anyone to sign in.
  await page.getByRole("heading", { name: "Search what your files say" }).waitFor();
  await expect(page.locator(".intro").textContent()).resolves.toContain("Locus is a document search service");
  await shot("01-sign-in");
  await page.getByRole("link", { name: "Create an account" }).click();
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create account" }).click();
  // The browser's own check refuses a short password before it is sent.
  expect(await page.getByLabel("Password").evaluate((el: HTMLInputElement) => el.validity.valid)).toBe(false);
  await page.getByLabel("Password").fill(PASSWORD);
  await shot("02-sign-up");
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
  await expect(page.getByText(`${EMAIL} (free)`).isVisible()).resolves.toBe(true);
  // On a wide screen the links are in the header's row: no Menu button (that is a phone's).
  await expect(page.getByRole("link", { name: "Webhooks" }).isVisible()).resolves.toBe(true);
  await expect(page.getByRole("button", { name: "Menu", exact: true }).isVisible()).resolves.toBe(false);
  // The session cookie is out of scripts' reach and stays on this site.
  const [cookie] = await context.cookies();
  expect(cookie).toMatchObject({ name: "locus_session", httpOnly: true, sameSite: "Strict" });
}, 30_000);

it("creates a live key, shows it once with a copy button and a warning, and the key works on the API", async () => {
  await page.getByLabel("Name").fill("ci server");
  await page.getByLabel("Environment").selectOption("live");
  await page.getByRole("button", { name: "Create key" }).click();
  const field = page.locator("#new-key");
  await field.waitFor();
  liveKey = await field.inputValue();
  expect(liveKey).toMatch(/^sk_live_[A-Za-z0-9_-]{32}$/);
  await expect(page.getByText("will not be shown again").isVisible()).resolves.toBe(true);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(liveKey);
  await shot("03-key-created");

  // Listed with its prefix only, never the whole key.
  const row = page.getByRole("row", { name: /ci server/ });
  await expect(row.textContent()).resolves.toContain(`${liveKey.slice(0, 12)}…`);
  expect(await page.locator("table").textContent()).not.toContain(liveKey);
  await expect(row.locator('td[data-label="Last used"]').textContent()).resolves.toBe("Never");
  const res = await api("/api/files", liveKey);
  expect(res.status).toBe(200);
  // A reload shows the list without the key: it was shown once. The key's use is on the list
  // (recorded as the request is answered: a reload or two may come first).
  for (let attempt = 1; ; attempt += 1) {
    await page.reload();
    await page.getByRole("row", { name: /ci server/ }).waitFor();
    const lastUsed = await row.locator('td[data-label="Last used"]').textContent();
    if (lastUsed !== "Never" || attempt === 20) {
      expect(lastUsed).not.toBe("Never");
      break;
    }
    await page.waitForTimeout(200);
  }
  expect(await page.locator("#new-key").count()).toBe(0);

  // Renaming: in its row, from the keyboard; kept after a reload, and the key still works.
  await page.getByRole("button", { name: "Rename ci server" }).click();
  const newName = page.getByLabel("New name for ci server");
  await expect(newName.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
  await newName.fill("build server");
  await shot("03b-key-rename");
  await newName.press("Enter");
  await page.getByRole("button", { name: "Rename build server" }).waitFor();
  await page.reload();
  await expect(page.getByRole("row", { name: /build server/ }).textContent()).resolves.toContain(
    `${liveKey.slice(0, 12)}…`,
  );
  expect((await api("/api/files", liveKey)).status).toBe(200);
}, 30_000);

it("uploads a PDF with a progress bar and shows its status turning ready without a reload", async () => {
  await page.getByRole("link", { name: "Files" }).click();
  await page.getByRole("heading", { name: "Files", level: 1 }).waitFor();
  const pdf = await makePdf({
    pages: [
      pageWith("An opening page about the harbour.", 2),
      pageWith("Tide tables for the northern pier.", 5),
      pageWith("The lighthouse keeper logs every passing albatross.", 9),
    ],
  });
  // The drop zone works from the keyboard: Enter opens the file chooser.
  const chooser = await chooserFromKeyboard(page.locator("label.drop"));
  await chooser.setFiles({ name: "harbour log.pdf", mimeType: "application/pdf", buffer: pdf });
  // Its progress bar fills to the end.
  await page.waitForFunction(
    () => document.querySelector<HTMLProgressElement>(".uploads progress")?.value === 100,
  );
  const row = page.locator("tr", { hasText: "harbour log.pdf" });
  await row.waitFor();
  await row.locator(".badge.ready").waitFor({ timeout: 60_000 });
  // What reading it found: three pages, its passages; no duration for a document.
  await expect(row.locator('td[data-label="Pages"]').textContent()).resolves.toBe("3");
  expect(Number(await row.locator('td[data-label="Passages"]').textContent())).toBeGreaterThan(0);
  await expect(row.locator('td[data-label="Duration"]').textContent()).resolves.toBe("—");
  await shot("04-files");
  // The upload counts against the month's quota, as a live key's would.
  await page.getByRole("link", { name: "Usage" }).click();
  await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
  await expect(page.locator("dl").textContent()).resolves.toMatch(/1 of 100/);
  await shot("05-usage");
}, 90_000);

it("searches, and a result opens the preview at the page it was found on", async () => {
  await page.getByRole("link", { name: "Search" }).click();
  await page.getByLabel("Search your files").fill("albatross lighthouse");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const result = page.locator(".result").first();
  await result.waitFor();
  await expect(result.textContent()).resolves.toContain("Page 3, line 9");
  // Grouped by file: one group per file, headed by its name, holding that file's passages.
  const group = page.locator(".result-group").first();
  await expect(group.getByRole("heading").textContent()).resolves.toMatch(/^harbour log\.pdf \d+ passages?$/);
  expect(await page.locator(".result-group").count()).toBe(
    new Set(await page.locator(".result-group h2").allTextContents()).size,
  );
  // The query is in the URL: a reload runs the same search again.
  expect(new URL(page.url()).hash).toBe("#/search?q=albatross+lighthouse&mode=quick");
  await page.reload();
  await page.locator(".result").first().waitFor();
  await expect(page.getByLabel("Search your files").inputValue()).resolves.toBe("albatross lighthouse");
  await expect(page.locator(".result").first().textContent()).resolves.toContain("Page 3, line 9");
  // "Copy as curl": the API call for this search, with a placeholder for the key, never a real
  // key; run as it is copied, with the variable set, it answers the same search.
  await page.getByRole("button", { name: "Copy as curl" }).click();
  const curl = await page.evaluate(() => navigator.clipboard.readText());
  expect(curl).toBe(
    `curl -s -H "Authorization: Bearer $LOCUS_API_KEY" '${locus.baseUrl}/api/search?q=albatross+lighthouse&mode=quick&limit=20'`,
  );
  expect(curl).not.toMatch(/sk_(live|test)_/);
  const answered = JSON.parse(
    execFileSync("bash", ["-c", curl], { env: { ...process.env, LOCUS_API_KEY: liveKey }, encoding: "utf8" }),
  ) as { results: { content: string }[] };
  expect(answered.results[0]?.content).toContain("albatross");
  // The snippet marks the words that matched, and only those.
  const marked = (await result.locator(".result-text mark").allTextContents()).map((m) => m.toLowerCase());
  expect(marked).toEqual(expect.arrayContaining(["albatross", "lighthouse"]));
  expect(marked.every((m) => m === "albatross" || m === "lighthouse")).toBe(true);
  await shot("06-search");
  await result.getByRole("button").click();
  const dialog = page.getByRole("dialog", { name: "harbour log.pdf" });
  await dialog.waitFor();
  await page.locator("#pdf-page", { hasText: "Page 3 of 3" }).waitFor({ timeout: 15_000 });
  // The matched line is marked on the page, where line 9 is: its top 60 + 8 × 16.5 = 192 points
  // down the 841.89-point A4 page (pdfkit's layout), one line high, from the 72-point margin.
  const mark = page.locator(".page-frame .text-mark");
  await mark.waitFor();
  const placed = () =>
    page.evaluate(() => {
      const canvas = document.querySelector("canvas.page")!.getBoundingClientRect();
      const box = document.querySelector(".text-mark")!.getBoundingClientRect();
      return {
        top: (box.top - canvas.top) / canvas.height,
        bottom: (box.bottom - canvas.top) / canvas.height,
        left: (box.left - canvas.left) / canvas.width,
        inView: box.top >= 0 && box.bottom <= window.innerHeight,
      };
    });
  const onPage = await placed();
  expect(Math.abs(onPage.top - 192 / 841.89)).toBeLessThan(6 / 841.89);
  expect(onPage.bottom - onPage.top).toBeGreaterThan(6 / 841.89);
  expect(onPage.bottom - onPage.top).toBeLessThan(16.5 / 841.89);
  expect(Math.abs(onPage.left - 72 / 595.28)).toBeLessThan(4 / 595.28);
  expect(onPage.inView).toBe(true);
  // The page scrolled to its mark, the Close button and the page controls are still there to use.
  const reachable = await page.evaluate(() =>
    ["#preview-close", ".pager button"].map((selector) => {
      const control = document.querySelector(selector)!;
      const box = control.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return {
        selector,
        reachable: box.top >= 0 && box.bottom <= window.innerHeight && control.contains(hit),
      };
    }),
  );
  expect(reachable).toEqual([
    { selector: "#preview-close", reachable: true },
    { selector: ".pager button", reachable: true },
  ]);
  // The page is drawn: the canvas comes to hold pixels that are not all white. The mark is placed
  // when drawing starts, and pdf.js finishes it a moment later (longer on a busy machine).
  await page.waitForFunction(
    () => {
      const canvas = document.querySelector<HTMLCanvasElement>("canvas.page")!;
      const data = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
      let dark = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i]! < 128) dark++;
      return dark > 100;
    },
    undefined,
    { timeout: 15_000, polling: 100 },
  );
  await shot("07-preview-at-page");
  // Only on the result's page: gone on another, back with it.
  await dialog.getByRole("button", { name: "Previous page" }).click();
  await page.locator("#pdf-page", { hasText: "Page 2 of 3" }).waitFor();
  await mark.waitFor({ state: "hidden" });
  await dialog.getByRole("button", { name: "Next page" }).click();
  await page.locator("#pdf-page", { hasText: "Page 3 of 3" }).waitFor();
  await mark.waitFor();
  expect(Math.abs((await placed()).top - onPage.top)).toBeLessThan(0.001);
  await dialog.getByRole("button", { name: "Close" }).click();

  // A link to an ai search fills the form but waits for the Search button: someone else's link
  // must not spend the account's summaries without a click (a quick one runs at once, above).
  const searchesAsked: string[] = [];
  const countSearches = (request: { url(): string }) => {
    if (new URL(request.url()).pathname === "/api/search") searchesAsked.push(request.url());
  };
  page.on("request", countSearches);
  await page.goto(`${locus.baseUrl}/dashboard#/search?q=lighthouse+keeper&mode=ai`);
  await page.getByRole("heading", { name: "Search", exact: true }).waitFor();
  expect(await page.getByLabel("Search your files").inputValue()).toBe("lighthouse keeper");
  expect(await page.getByLabel("Mode").inputValue()).toBe("ai");
  await page.waitForTimeout(500);
  expect(searchesAsked).toEqual([]);
  // The page says why nothing ran, and runs it with one click.
  const held = page.getByRole("status").filter({ hasText: "This AI search was not run yet" });
  await held.waitFor();
  await shot("07b-search-ai-link");
  await held.getByRole("button", { name: "Run this AI search" }).click();
  await page.getByRole("heading", { name: "Answer" }).waitFor();
  expect(searchesAsked).toHaveLength(1);
  page.off("request", countSearches);

  // ai mode answers with a summary whose markers open their place too.
  await page.getByLabel("Mode").selectOption("ai");
  await page.getByLabel("Search your files").fill("What does the lighthouse keeper write down?");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.getByRole("heading", { name: "Answer" }).waitFor();
  expect(new URL(page.url()).hash).toMatch(/&mode=ai$/);
  await expect(page.locator(".summary-text").textContent()).resolves.toContain(
    "The lighthouse keeper logs every passing albatross",
  );
  await shot("08-search-ai");
  await page.getByRole("button", { name: /^Source 1: harbour log\.pdf, Page 3, line 9/ }).click();
  await page.locator("#pdf-page", { hasText: "Page 3 of 3" }).waitFor({ timeout: 15_000 });
  await page.getByRole("dialog", { name: "harbour log.pdf" }).getByRole("button", { name: "Close" }).click();
  // Where the answer came from, in words a user reads.
  await expect(page.locator(".card.summary .hint").first().textContent()).resolves.toContain(
    "Sentences picked from your documents (offline)",
  );
  // A question the files do not answer says so, instead of stitching sentences together.
  await page.getByLabel("Search your files").fill("What is the capital of Mongolia?");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.locator(".summary-text.no-answer").waitFor();
  await expect(page.locator(".summary-text").textContent()).resolves.toContain(
    "No passage in your documents seems to answer this question",
  );
}, 60_000);

it("opens a recording's result at the second it was said, beside its transcript", async () => {
  // Twelve seconds of silence, then the phrase, then more speech: over 15 s, so two passages or more.
  const more = [
    "The boiler room is locked on weekends.",
    "Bring a torch for the cellar stairs.",
    "The ferry timetable changes in the spring.",
    "Volunteers cleaned the beach last weekend.",
    "Next month we discuss the parking budget.",
  ];
  const parts: (Buffer | number)[] = [12, await speak("Please contact the caretaker with questions.")];
  for (const sentence of more) parts.push(0.6, await speak(sentence));
  const audio = recording([...parts, 2]);
  await page.getByRole("link", { name: "Files" }).click();
  await page
    .locator("#file-input")
    .setInputFiles({ name: "message.wav", mimeType: "audio/wav", buffer: audio });
  const recordingRow = page.locator("tr", { hasText: "message.wav" });
  await recordingRow.locator(".badge.ready").waitFor({ timeout: 90_000 });
  // A recording's length, as minutes and seconds (about 20 s of speech and silence).
  await expect(recordingRow.locator('td[data-label="Duration"]').textContent()).resolves.toMatch(
    /^0:[1-3]\d$/,
  );
  await expect(recordingRow.locator('td[data-label="Pages"]').textContent()).resolves.toBe("—");
  await page.getByRole("link", { name: "Search" }).click();
  await page.getByLabel("Mode").selectOption("quick");
  await page.getByLabel("Search your files").fill("caretaker");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const result = page.locator(".result-group", { hasText: "message.wav" }).locator(".result").first();
  await result.waitFor();
  await result.getByRole("button").click();
  await page.locator("#media-start").waitFor();
  await page.waitForFunction(() => (document.querySelector("audio")?.currentTime ?? 0) > 0);
  // A passage's start as the list shows it ("0:27"), in whole seconds.
  const startOf = async (passage: Locator) => {
    const [m, sec] = (await passage.locator(".passage-time").textContent())!.split(":").map(Number);
    return m! * 60 + sec!;
  };
  const currentTime = () => page.locator("audio").evaluate((el: HTMLAudioElement) => el.currentTime);
  const at = await currentTime();
  expect(Math.abs(at - 12)).toBeLessThan(2);
  // The transcript, each passage a button with its start time; the result's passage is marked,
  // its matched word too, and scrolled into the list's view.
  const transcript = page.getByRole("list", { name: "Transcript" });
  await transcript.waitFor({ timeout: 15_000 });
  const passages = transcript.getByRole("button");
  expect(await passages.count()).toBeGreaterThanOrEqual(2);
  const found = transcript.locator('button[aria-current="true"]');
  await expect(found.count()).resolves.toBe(1);
  await expect(found.locator("mark").allTextContents()).resolves.toContain("caretaker");
  expect(Math.abs((await startOf(found)) - 12)).toBeLessThan(2);
  expect(
    await found.evaluate((el) => {
      const list = el.closest("ol")!.getBoundingClientRect();
      const item = el.getBoundingClientRect();
      return item.top >= list.top && item.bottom <= list.bottom;
    }),
  ).toBe(true);
  await shot("09-preview-at-second");
  // Choosing another passage plays from its start.
  const other = passages.last();
  await expect(other.getAttribute("aria-current")).resolves.toBeNull();
  const start = await startOf(other);
  expect(start).toBeGreaterThan(12);
  await other.click();
  await page.waitForFunction((s) => (document.querySelector("audio")?.currentTime ?? 0) >= s, start);
  expect(await currentTime()).toBeLessThan(start + 1.5);
  await page.getByRole("dialog", { name: "message.wav" }).getByRole("button", { name: "Close" }).click();
}, 120_000);

it("opens an office document's result on its PDF rendition's page, and a Markdown result at its lines", async () => {
  const docx = await makeTextDocument("docx", [
    ["Agenda of the sailing club."],
    ["Treasurer's report.", "The dinghy shed roof needs new felt before winter."],
  ]);
  await page.getByRole("link", { name: "Files" }).click();
  await page.locator("#file-input").setInputFiles([
    { name: "agenda.docx", mimeType: "application/octet-stream", buffer: docx },
    {
      name: "rules.md",
      mimeType: "text/markdown",
      buffer: Buffer.from("# Club rules\n\n## Moorings\n\nMoorings are allotted each March.\n"),
    },
  ]);
  for (const name of ["agenda.docx", "rules.md"]) {
    await page.locator("tr", { hasText: name }).locator(".badge.ready").waitFor({ timeout: 90_000 });
  }
  await page.getByRole("link", { name: "Search" }).click();
  await page.getByLabel("Mode").selectOption("quick");
  await page.getByLabel("Search your files").fill("dinghy shed roof");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const result = page.locator(".result-group", { hasText: "agenda.docx" }).locator(".result").first();
  await result.waitFor();
  await expect(result.textContent()).resolves.toContain("Page 2, line 2");
  await result.getByRole("button").click();
  // The PDF the document was converted to, at the result's page, and the original to download.
  const dialog = page.getByRole("dialog", { name: "agenda.docx" });
  await page.locator("#pdf-page", { hasText: "Page 2 of 2" }).waitFor({ timeout: 15_000 });
  const original = dialog.getByRole("link", { name: "Download the original" });
  const bytes = await (await fetch((await original.getAttribute("href"))!)).arrayBuffer();
  expect(Buffer.from(bytes).equals(docx)).toBe(true);
  await shot("09a-preview-office-document");
  await dialog.getByRole("button", { name: "Close" }).click();

  // A Markdown file has no pages: its passages, the result's marked at its lines under its heading.
  await page.getByLabel("Search your files").fill("allotted March");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const rule = page.locator(".result-group", { hasText: "rules.md" }).locator(".result").first();
  await rule.waitFor();
  await expect(rule.textContent()).resolves.toContain("Line 3, in “Club rules › Moorings”");
  await rule.getByRole("button").click();
  const text = page.getByRole("list", { name: "Text" });
  await text.waitFor({ timeout: 15_000 });
  const found = text.locator('li[aria-current="true"]');
  await expect(found.locator("mark").allTextContents()).resolves.toEqual(["allotted", "March"]);
  await shot("09a-preview-text-document");
  await page.getByRole("dialog", { name: "rules.md" }).getByRole("button", { name: "Close" }).click();
}, 120_000);

it("shows searches and uploads per day in a chart, and per key with its last use", async () => {
  await page.getByRole("link", { name: "Usage" }).click();
  await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
  // Per key: the key's one search (the copied curl command), and the dashboard's own searches and
  // its four uploads (the PDF, the recording, the office document and the Markdown file).
  const keyRow = page.locator("#usage-keys tr", { hasText: "build server" });
  await expect(keyRow.locator('td[data-label="Searches"]').textContent()).resolves.toBe("1");
  await expect(keyRow.locator('td[data-label="Uploads"]').textContent()).resolves.toBe("0");
  await expect(keyRow.locator('td[data-label="Last used"]').textContent()).resolves.not.toBe("—");
  const pageRow = page.locator("#usage-keys tr", { hasText: "This dashboard" });
  await expect(pageRow.locator('td[data-label="Uploads"]').textContent()).resolves.toBe("4");
  const pageSearches = Number(await pageRow.locator('td[data-label="Searches"]').textContent());
  expect(pageSearches).toBeGreaterThanOrEqual(5);
  const searches = pageSearches + 1;
  // The chart: today's bars, the sum said in words to screen readers, the numbers in a table.
  const chart = page.getByRole("img", { name: new RegExp(`^${searches} searches and 4 uploads from `) });
  await chart.waitFor();
  const bars = await chart.evaluate((svg) =>
    Array.from(svg.querySelectorAll("rect")).map((r) => Number(r.getAttribute("height"))),
  );
  expect(bars).toHaveLength(60);
  expect(bars.slice(0, -2).every((height) => height === 0)).toBe(true);
  expect(bars.at(-2)).toBeGreaterThan(bars.at(-1)!);
  await page.getByText("The numbers per day").click();
  const today = page.locator("#usage-days tbody tr");
  await expect(today.count()).resolves.toBe(1);
  await expect(today.locator("td").allTextContents()).resolves.toEqual([
    expect.any(String),
    String(searches),
    "4",
  ]);
  await shot("09b-usage-chart");
}, 30_000);

it("pages search results, filters them by kind and metadata, and shows a file's metadata", async () => {
  // Twelve pages that each say the word, uploaded with metadata through the API.
  const form = new FormData();
  form.append("metadata", JSON.stringify({ team: "birds", tags: ["moor", "winter"] }));
  const pages = Array.from({ length: 12 }, (_, i) =>
    pageWith(`Ptarmigan count number ${i + 1} on the moor.`, 3),
  );
  form.append("file", new Blob([new Uint8Array(await makePdf({ pages }))]), "moor survey.pdf");
  const uploaded = await fetch(`${locus.baseUrl}/api/files/upload`, {
    method: "POST",
    headers: { Authorization: `Bearer ${liveKey}` },
    body: form,
  });
  expect(uploaded.status).toBe(200);
  await page.getByRole("link", { name: "Files" }).click();
  const row = page.locator("tr", { hasText: "moor survey.pdf" });
  await row.locator(".badge.ready").waitFor({ timeout: 60_000 });
  await expect(
    row.getByRole("list", { name: "Metadata of moor survey.pdf" }).getByRole("listitem").allTextContents(),
  ).resolves.toEqual(["team: birds", "tags: moor, winter"]);

  await page.getByRole("link", { name: "Search" }).click();
  await page.getByLabel("Search your files").fill("ptarmigan");
  await page.getByText("Filters and page size").click();
  await page.getByLabel("Page size").selectOption("10");
  await page.getByLabel("Metadata").fill("team=birds");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.getByText(/^10 results in 1 file so far/).waitFor();
  expect(new URL(page.url()).hash).toBe("#/search?q=ptarmigan&mode=quick&metadata.team=birds&limit=10");
  await page.getByRole("button", { name: "Copy as curl" }).click();
  await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(
    `curl -s -H "Authorization: Bearer $LOCUS_API_KEY" '${locus.baseUrl}/api/search?q=ptarmigan&mode=quick&limit=10&metadata.team=birds'`,
  );
  await shot("08a-search-filters");
  // The next page adds the rest below, and then there is no more.
  await page.getByRole("button", { name: "More results" }).click();
  await page.getByText(/^12 results in 1 file, /).waitFor();
  await expect(page.getByRole("button", { name: "More results" }).count()).resolves.toBe(0);
  expect(await page.locator(".result").count()).toBe(12);
  // Another kind of file, or other metadata: none of them.
  await page.getByLabel("Kind of file").selectOption("audio");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.getByText("Nothing found.").waitFor();
  // A reload comes back to the same filters.
  await page.reload();
  await expect(page.getByLabel("Kind of file").inputValue()).resolves.toBe("audio");
  await expect(page.getByLabel("Metadata").inputValue()).resolves.toBe("team=birds");
  await page.getByText("Nothing found.").waitFor();
}, 90_000);

/**
 * Words that a line break cuts in two inside the page's table cells and badges ("read|y"), and
 * badges that take two lines: each as what and where. A word's range has client rects on more than
 * one line when it is broken.
 */
function brokenWords(target: Page): Promise<string[]> {
  return target.evaluate(() => {
    const broken: string[] = [];
    for (const element of Array.from(
      document.querySelectorAll<HTMLElement>("main td, main th, main .badge"),
    )) {
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of (node.textContent ?? "").matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const lines = new Set(
            Array.from(range.getClientRects())
              .filter((r) => r.width > 0)
              .map((r) => Math.round(r.top)),
          );
          if (lines.size > 1) broken.push(`"${word[0]}" in a ${element.tagName.toLowerCase()}`);
        }
      }
      if (element.classList.contains("badge")) {
        const fontSize = parseFloat(getComputedStyle(element).fontSize);
        if (element.getBoundingClientRect().height > 2.2 * fontSize)
          broken.push(`the badge "${element.textContent}" on two lines`);
      }
    }
    return broken;
  });
}

it("keeps every word whole in the tables and badges at desktop widths (1024, 1280, 1440 px)", async () => {
  for (const view of ["Files", "API keys", "Usage"]) {
    await page.getByRole("link", { name: view }).click();
    await page.getByRole("heading", { name: view, level: 1 }).waitFor();
    await page.locator("main tbody tr:visible").first().waitFor();
    for (const width of [1024, 1280, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      expect({ view, width, broken: await brokenWords(page) }).toEqual({ view, width, broken: [] });
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}, 30_000);

it("revokes the key after a confirmation, and the API refuses it at once", async () => {
  await page.getByRole("link", { name: "API keys" }).click();
  await page.getByRole("button", { name: "Revoke build server" }).click();
  const confirm = page.getByRole("dialog", { name: "Revoke “build server”?" });
  await confirm.waitFor();
  await shot("10-revoke-confirm");
  await confirm.getByRole("button", { name: "Revoke key" }).click();
  await page
    .getByRole("row", { name: /build server/ })
    .getByText("Revoked")
    .waitFor();
  await shot("11-key-revoked");
  expect((await api("/api/files", liveKey)).status).toBe(401);
}, 30_000);

it("deletes a file after a confirmation", async () => {
  await page.getByRole("link", { name: "Files" }).click();
  await page.locator("#file-input").setInputFiles({
    name: "scratch.pdf",
    mimeType: "application/pdf",
    buffer: await makePdf({ pages: [["Scratch."]] }),
  });
  const row = page.locator("tr", { hasText: "scratch.pdf" });
  await row.waitFor();
  await page.getByRole("button", { name: "Delete scratch.pdf" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete “scratch.pdf”?" });
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(row.count()).resolves.toBe(1);
  await page.getByRole("button", { name: "Delete scratch.pdf" }).click();
  await confirm.getByRole("button", { name: "Delete file" }).click();
  await row.waitFor({ state: "detached" });
  await expect(page.locator("tr", { hasText: "harbour log.pdf" }).count()).resolves.toBe(1);
}, 30_000);

it("fits a phone-width screen, and signing out ends the session", async () => {
  const phone = await browser.newContext({
    viewport: { width: 375, height: 812 },
    isMobile: true,
    bypassCSP: true,
  });
  try {
    await phone.addCookies(await context.cookies());
    const small = await phone.newPage();
    await small.goto(`${locus.baseUrl}/dashboard#/files`);
    await small.locator("tr", { hasText: "harbour log.pdf" }).waitFor();
    // Nothing wider than the screen: no sideways scrolling.
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    // The header on one line: the brand, the view's name and the Menu button side by side, the
    // header one row high (the tallest of them and its padding), nothing past its right edge.
    const menuButton = small.getByRole("button", { name: "Menu", exact: true });
    const headerLine = () =>
      small.evaluate(() => {
        const header = document.querySelector<HTMLElement>("header.top")!;
        const parts = [".brand", "#nav-current", "#menu-toggle"].map((s) =>
          header.querySelector(s)!.getBoundingClientRect(),
        );
        const centres = parts.map((r) => r.top + r.height / 2);
        const style = getComputedStyle(header);
        return {
          spread: Math.max(...centres) - Math.min(...centres),
          rowHeight: Math.max(...parts.map((r) => r.height)),
          contentHeight: header.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom),
          rightmost: Math.max(...parts.map((r) => r.right)),
          headerFits: header.scrollWidth <= header.clientWidth,
          pageFits: document.documentElement.scrollWidth <= document.documentElement.clientWidth,
          name: document.getElementById("nav-current")!.textContent,
        };
      });
    const closedLine = await headerLine();
    expect(closedLine).toMatchObject({ headerFits: true, pageFits: true, name: "Files" });
    expect(closedLine.spread).toBeLessThan(8);
    expect(Math.abs(closedLine.contentHeight - closedLine.rowHeight)).toBeLessThanOrEqual(1);
    expect(closedLine.rightmost).toBeLessThanOrEqual(375);
    await expect(small.getByRole("navigation", { name: "Dashboard" }).isVisible()).resolves.toBe(false);
    await expect(menuButton.getAttribute("aria-expanded")).resolves.toBe("false");
    await shot("12-phone-files", small);
    // The Menu opens the navigation below it: every destination and Sign out in sight, within the
    // screen's width, and clickable (Playwright's trial click: visible, enabled, not covered).
    await menuButton.click();
    await expect(menuButton.getAttribute("aria-expanded")).resolves.toBe("true");
    const menu = small.getByRole("navigation", { name: "Dashboard" });
    const destinations = [
      ...["API keys", "Files", "Search", "Usage", "Webhooks"].map((name) =>
        menu.getByRole("link", { name, exact: true }),
      ),
      menu.getByRole("button", { name: "Sign out" }),
    ];
    for (const destination of destinations) {
      const box = (await destination.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
      await destination.click({ trial: true, timeout: 2_000 });
    }
    await expect(menu.getByRole("link", { name: "Files" }).getAttribute("aria-current")).resolves.toBe(
      "page",
    );
    const openLine = await headerLine();
    expect(openLine).toMatchObject({
      headerFits: true,
      pageFits: true,
      contentHeight: closedLine.contentHeight,
    });
    await shot("12b-phone-menu", small);
    // From the keyboard: Tab goes from the button into the menu; Escape there closes it and gives
    // focus back to the button.
    await small.keyboard.press("Tab");
    await expect(small.evaluate(() => document.activeElement?.textContent)).resolves.toBe("API keys");
    await small.keyboard.press("Escape");
    await menu.waitFor({ state: "hidden" });
    await expect(menuButton.getAttribute("aria-expanded")).resolves.toBe("false");
    await expect(menuButton.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    // A recording's preview: the player above its transcript, both within the screen's width.
    await small.getByRole("button", { name: "Preview message.wav" }).click();
    const transcript = small.getByRole("list", { name: "Transcript" });
    await transcript.waitFor({ timeout: 15_000 });
    const [player, list] = await Promise.all(
      [small.locator("audio"), transcript].map((l) => l.boundingBox()),
    );
    expect(list!.y).toBeGreaterThanOrEqual(player!.y + player!.height);
    expect(list!.x + list!.width).toBeLessThanOrEqual(375);
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot("13-phone-transcript", small);
    await small.getByRole("dialog", { name: "message.wav" }).getByRole("button", { name: "Close" }).click();
    // Choosing a destination in the menu goes there and closes the menu. The usage chart and the
    // search results fit the phone too.
    await menuButton.click();
    await menu.getByRole("link", { name: "Usage" }).click();
    await small.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    await menu.waitFor({ state: "hidden" });
    await expect(menuButton.getAttribute("aria-expanded")).resolves.toBe("false");
    await expect(small.locator("#nav-current").textContent()).resolves.toBe("Usage");
    // And scratch.pdf, and the moor survey the key uploaded.
    await small.getByRole("img", { name: /searches and 6 uploads/ }).waitFor();
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot("14-phone-usage", small);
    await small.goto(`${locus.baseUrl}/dashboard#/search?q=albatross&mode=quick`);
    await small.locator(".result").first().waitFor();
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot("15-phone-search", small);
  } finally {
    await phone.close();
  }

  const session = (await context.cookies()).find((c) => c.name === "locus_session")?.value ?? "";
  const withCookie = { headers: { cookie: `locus_session=${session}` } };
  expect((await fetch(`${locus.baseUrl}/dashboard/api/session`, withCookie)).status).toBe(200);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to Locus" }).waitFor();
  // The old cookie, replayed, no longer opens anything: the session ended on the server.
  expect((await fetch(`${locus.baseUrl}/dashboard/api/session`, withCookie)).status).toBe(401);
  // A shared search link, opened signed out: sign-in first, then the search it holds.
  await page.goto(`${locus.baseUrl}/dashboard#/search?q=tide&mode=quick`);
  await page.getByRole("heading", { name: "Sign in to Locus" }).waitFor();

  // And signing in again works.
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Search", level: 1 }).waitFor();
  await expect(page.getByLabel("Search your files").inputValue()).resolves.toBe("tide");
  await expect(page.locator(".result").first().textContent()).resolves.toContain("Page 2");
  expect(pageErrors).toEqual([]);
}, 60_000);

describe("on the free plan's real rate limit (5 requests a second)", () => {
  let limited: LocusProcess;
  beforeAll(async () => {
    limited = await startLocus({ env: { LOCUS_RATE_LIMIT_FREE: "5" } });
  }, 180_000);
  afterAll(async () => {
    expect(await limited.stop()).toBe(0);
    removeDataDir(limited.dataDir);
  });

  it("drops 10 files at once and loses none: each ends uploaded, refusals are waited out", async () => {
    const own = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const tab = await own.newPage();
      const errors: string[] = [];
      tab.on("pageerror", (err) => errors.push(err.message));
      const refused: number[] = [];
      tab.on("response", (res) => {
        if (res.status() === 429) refused.push(res.status());
      });
      await tab.goto(`${limited.baseUrl}/dashboard#/signup`);
      await tab.getByRole("heading", { name: "Create your Locus account" }).waitFor();
      await tab.getByLabel("Email").fill(`burst-${Date.now()}@example.com`);
      await tab.getByLabel("Password").fill(PASSWORD);
      await tab.getByRole("button", { name: "Create account" }).click();
      await tab.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
      await tab.getByRole("link", { name: "Files" }).click();
      await tab.getByRole("heading", { name: "Files", level: 1 }).waitFor();

      const files = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => ({
          name: `burst-${i}.pdf`,
          mimeType: "application/pdf",
          buffer: await makePdf({ pages: [[`Burst page number ${i} about gannets.`]] }),
        })),
      );
      await tab.locator("#file-input").setInputFiles(files);
      // Every file reaches the list, and none is left failed on the uploads list.
      for (const f of files) await tab.locator("tr", { hasText: f.name }).waitFor({ timeout: 90_000 });
      expect(await tab.locator(".uploads li.failed").count()).toBe(0);
      // The list keeps looking while files are read, whatever the refusals: all end ready.
      await tab.waitForFunction(
        () =>
          document.querySelectorAll("tbody tr .badge.ready").length === 10 ||
          document.querySelectorAll("tbody tr .badge.failed").length > 0,
        undefined,
        { timeout: 90_000 },
      );
      expect(await tab.locator("tbody tr .badge.ready").count()).toBe(10);
      // Each counted once against the month's quota: no upload was sent twice.
      await tab.getByRole("link", { name: "Usage" }).click();
      await tab.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
      await expect(tab.locator("dl").textContent()).resolves.toMatch(/10 of 100/);
      expect(errors).toEqual([]);
      // Not a given: on a fast machine the queue may never meet the limit. Reported, not required.
      recordResilience("audit-dashboard-burst", {
        files: 10,
        uploaded_and_ready: 10,
        refused_429_and_retried: refused.length,
      });
    } finally {
      await own.close();
    }
  }, 180_000);
});
