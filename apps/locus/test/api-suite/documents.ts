import { readFileSync } from "node:fs";
import { join } from "node:path";
import { schemaErrors } from "../openapi-validator.ts";
import {
  REPO_ROOT,
  makePresentation,
  makeSpreadsheet,
  makeTextDocument,
  pdfPageLines,
  type Client,
} from "@locus/testing";
import { type ApiSuite, type FileBody, type SearchBody, uploadReady } from "./shared.ts";

/**
 * How long an office document may take to be ready: each is a LibreOffice run, two at a time, and
 * on a loaded CI runner (two suites with a split stack each) six of them took over 30 s.
 */
const OFFICE_WAIT_MS = 90_000;

/** Where a phrase is in a PDF: its page and its non-empty line from the top of the page, from 1. */
function placeOf(pages: string[][], phrase: string): { page: number; line: number } {
  for (const [p, lines] of pages.entries()) {
    const i = lines.findIndex((line) => line.replace(/\s+/g, " ").includes(phrase));
    if (i >= 0) return { page: p + 1, line: i + 1 };
  }
  throw new Error(`"${phrase}" is on no page of the rendition`);
}

/**
 * Lines to look for in a real document: on its first, middle and last pages, the first line with
 * two words (four letters or more) that the whole rendition holds nowhere else, so exactly one
 * place answers the query made of them.
 */
function distinctiveLines(pages: string[][]): { q: string; page: number; line: number }[] {
  const wordsOf = (text: string) => text.toLowerCase().match(/[a-z]{4,}/g) ?? [];
  const counts = new Map<string, number>();
  for (const word of pages.flat().flatMap(wordsOf)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const chosen = new Set([0, Math.floor((pages.length - 1) / 2), pages.length - 1]);
  return [...chosen].flatMap((p) => {
    for (const [i, text] of (pages[p] ?? []).entries()) {
      const unique = [...new Set(wordsOf(text))].filter((word) => counts.get(word) === 1);
      if (unique.length >= 2) return [{ q: unique.slice(0, 3).join(" "), page: p + 1, line: i + 1 }];
    }
    return [];
  });
}

interface PreviewBody {
  url: string;
  original_url?: string;
  expires_in: number;
}

async function search(c: Client, q: string, fileId: string): Promise<SearchBody> {
  const res = await c.get(`/api/search?q=${encodeURIComponent(q)}&file_id=${fileId}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as SearchBody;
  expect(schemaErrors("SearchResponse", body)).toBeNull();
  return body;
}

/**
 * Office documents made by LibreOffice in the test (text documents, a presentation, a spreadsheet)
 * and text formats, searched over HTTP: every office result's page and line are checked against
 * the PDF rendition the preview link serves, read with pdftotext as a reader sees it.
 */
export function describeDocuments(s: ApiSuite): void {
  describe("office and text documents", () => {
    // One phrase per page, at a different line on each.
    const pages = [
      ["Quarterly minutes of the harbour board.", "The pilots asked for new radios."],
      ["Item one.", "Item two.", "The lighthouse keeper reported gannets nesting on the breakwater."],
      ["Appendix.", "Budget lines.", "Dredging costs.", "A kelp survey follows in spring."],
    ];
    const formats = ["docx", "odt", "doc", "rtf"] as const;
    const mimeTypes: Record<(typeof formats)[number] | "pptx" | "xlsx", string> = {
      docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      odt: "application/vnd.oasis.opendocument.text",
      doc: "application/msword",
      rtf: "application/rtf",
      pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
      xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    };
    const documents = new Map<string, { file: FileBody; bytes: Buffer }>();

    beforeAll(async () => {
      const made = await Promise.all([
        ...formats.map(async (format) => [format, await makeTextDocument(format, pages)] as const),
        (async () =>
          [
            "pptx",
            await makePresentation("pptx", [
              ["Welcome to the field trip"],
              ["Second slide", "Binoculars and waterproof notebooks are required"],
            ]),
          ] as const)(),
        (async () =>
          [
            "xlsx",
            await makeSpreadsheet("xlsx", [
              ["Species", "Count"],
              ["Oystercatcher", "14"],
              ["Turnstone", "6"],
              ["Sandpiper", "23"],
              // A note with no cell to its right: it runs on across the empty cells, whole, as
              // printed (a cell's text that the next cell cuts off is cut off in print too).
              ["Note: the purple sandpiper wintering flock roosts on the groyne"],
            ]),
          ] as const)(),
      ]);
      const uploaded = await Promise.all(
        made.map(
          async ([format, bytes]) =>
            [format, await uploadReady(s.live, bytes, `minutes.${format}`, OFFICE_WAIT_MS)] as const,
        ),
      );
      for (const [i, [format, file]] of uploaded.entries())
        documents.set(format, { file, bytes: made[i]![1] });
    }, 240_000);

    it.each([...formats, "pptx", "xlsx"] as const)(
      "reads a %s into a ready document, keeping its type",
      (format) => {
        const { file } = documents.get(format)!;
        expect(file).toMatchObject({
          status: "ready",
          file_type: "document",
          mime_type: mimeTypes[format],
          error: null,
        });
        expect(schemaErrors("FileRecord", file)).toBeNull();
        expect(file.passage_count).toBeGreaterThan(0);
      },
    );

    it.each(formats)(
      "finds each page's phrase in a %s on the page and line of its PDF rendition",
      async (format) => {
        const { file, bytes } = documents.get(format)!;
        expect(file.page_count).toBe(3);
        const preview = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as PreviewBody;
        expect(schemaErrors("PreviewUrl", preview)).toBeNull();
        const rendition = await fetch(preview.url);
        expect(rendition.status).toBe(200);
        expect(rendition.headers.get("content-type")).toBe("application/pdf");
        const pdf = Buffer.from(await rendition.arrayBuffer());
        expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
        const lines = await pdfPageLines(pdf);
        expect(lines).toHaveLength(3);
        for (const phrase of ["pilots asked for new radios", "gannets nesting", "kelp survey follows"]) {
          const body = await search(s.live, phrase, file.id);
          const top = body.results[0];
          expect(top?.file_id).toBe(file.id);
          expect(top?.files).toEqual({ original_name: `minutes.${format}`, file_type: "document" });
          const where = placeOf(lines, phrase);
          expect({ page: top?.locator.page, line: top?.locator.line }).toEqual(where);
        }
        // The original stays downloadable, byte for byte.
        expect(preview.original_url).toBeDefined();
        const original = await fetch(preview.original_url!);
        expect(original.status).toBe(200);
        expect(Buffer.from(await original.arrayBuffer()).equals(bytes)).toBe(true);
      },
    );

    it("finds a slide's text on the slide's page, and a spreadsheet's cell on its printed page", async () => {
      for (const [format, phrase] of [
        ["pptx", "waterproof notebooks"],
        ["xlsx", "purple sandpiper wintering"],
      ] as const) {
        const { file } = documents.get(format)!;
        const preview = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as PreviewBody;
        const lines = await pdfPageLines(Buffer.from(await (await fetch(preview.url)).arrayBuffer()));
        expect(file.page_count).toBe(lines.length);
        const top = (await search(s.live, phrase, file.id)).results[0];
        expect(top?.file_id).toBe(file.id);
        expect({ page: top?.locator.page, line: top?.locator.line }).toEqual(placeOf(lines, phrase));
        if (format === "pptx") expect(top?.locator.page).toBe(2);
      }
    });

    it("reads Markdown and HTML as a reader sees them: lines from the top, under their headings", async () => {
      const markdown = [
        "# Field guide",
        "",
        "Intro paragraph about the coast.",
        "",
        "## Waders",
        "",
        "- Curlews probe the mudflats with long bills.",
        "",
        "```",
        "code is text too",
        "```",
      ].join("\n");
      const md = await uploadReady(s.live, Buffer.from(markdown), "guide.md");
      expect(md).toMatchObject({
        status: "ready",
        file_type: "document",
        mime_type: "text/markdown",
        page_count: null,
      });
      const top = (await search(s.live, "curlews probe mudflats", md.id)).results[0];
      expect(top?.locator).toMatchObject({ line: 4, section: ["Field guide", "Waders"], source: "text" });
      expect(top?.locator.page).toBeUndefined();

      const html =
        "<!DOCTYPE html><html><head><title>Tides</title><style>p{color:red}</style>" +
        "<script>var secretword = 'zanzibar';</script></head><body><h1>Tide tables</h1>" +
        "<p>Spring tides follow the full moon.</p><p hidden>invisible quokka text</p>" +
        "<h2>Neap tides</h2><p>Neap tides come at the quarter moons.</p></body></html>";
      const page = await uploadReady(s.live, Buffer.from(html), "tides.html");
      expect(page).toMatchObject({ status: "ready", file_type: "document", mime_type: "text/html" });
      const neap = (await search(s.live, "quarter moons", page.id)).results[0];
      expect(neap?.locator).toMatchObject({ line: 4, section: ["Tide tables", "Neap tides"] });
      // Scripts, styles and hidden text are not what a reader sees: never found.
      for (const hidden of ["zanzibar", "quokka", "color"]) {
        expect((await search(s.live, hidden, page.id)).results).toEqual([]);
      }
      // A text file's preview is the file itself, shown as text; there is no rendition.
      const preview = (await (await s.live.get(`/api/files/${md.id}/preview-url`)).json()) as PreviewBody;
      expect(preview.original_url).toBeUndefined();
      const shown = await fetch(preview.url);
      expect(shown.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await shown.text()).toBe(markdown);
      // An HTML page is shown as a page only where the preview is sandboxed (Locus's own links);
      // S3's presigned links cannot send that header, so there it is shown as its source.
      const htmlLink = (await (await s.live.get(`/api/files/${page.id}/preview-url`)).json()) as PreviewBody;
      const htmlShown = await fetch(htmlLink.url);
      if (s.shape === "all-in-one") {
        expect(htmlShown.headers.get("content-type")).toMatch(/^text\/html/);
        expect(htmlShown.headers.get("content-security-policy")).toMatch(/^sandbox/);
      } else {
        expect(htmlShown.headers.get("content-type")).toMatch(/^text\/plain/);
      }
      expect(await htmlShown.text()).toBe(html);
    });

    // The real documents of bench/fixtures/documents with words to search for (the type samples
    // are character tables, the example decks a few words: bench --only quality measures them all).
    it.each(["writer2latex-user-manual.odt", "gworkspace-recycler-help.rtf", "readxl-deaths.xlsx"])(
      "finds lines of a real document, %s, on the page and line of its rendition",
      async (name) => {
        const bytes = readFileSync(join(REPO_ROOT, "bench", "fixtures", "documents", name));
        const file = await uploadReady(s.live, bytes, name, OFFICE_WAIT_MS);
        expect(file).toMatchObject({ status: "ready", file_type: "document" });
        const preview = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as PreviewBody;
        const pages = await pdfPageLines(Buffer.from(await (await fetch(preview.url)).arrayBuffer()));
        expect(file.page_count).toBe(pages.length);
        const lines = distinctiveLines(pages);
        expect(lines.length).toBeGreaterThan(0);
        for (const { q, page, line } of lines) {
          const top = (await search(s.live, q, file.id)).results[0];
          expect({ q, page: top?.locator.page, line: top?.locator.line }).toEqual({ q, page, line });
        }
      },
      120_000,
    );

    it("keeps a document's rendition from every other user, and removes it with the file", async () => {
      const { file } = documents.get("odt")!;
      expect((await s.other.get(`/api/files/${file.id}/preview-url`)).status).toBe(404);
      expect((await search(s.other, "gannets nesting", file.id)).results).toEqual([]);
      const preview = (await (await s.live.get(`/api/files/${file.id}/preview-url`)).json()) as PreviewBody;
      expect((await s.live.del(`/api/files/${file.id}`)).status).toBe(200);
      // Locus's own links stop at once; S3's presigned ones find the object gone.
      expect((await fetch(preview.url)).status).toBeGreaterThanOrEqual(400);
    });
  });
}
