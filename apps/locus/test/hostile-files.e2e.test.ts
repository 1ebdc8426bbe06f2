import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  client,
  compoundFileOfAnotherKind,
  concatList,
  createUserWithKey,
  declaringUnpackedSize,
  docxLinkingRemote,
  encodeAudio,
  encryptedOoxml,
  gzipped,
  hlsPlaylist,
  makeDecompressionBomb,
  makePdf,
  makeTextDocument,
  makeTextImage,
  makeVideo,
  mp3Disguise,
  mp4Claiming,
  nestedDocx,
  odtDeclaredEncrypted,
  odtLinkingImage,
  odtWithLoadMacro,
  pageWith,
  pdfFlateBomb,
  pdfWithJavaScript,
  pdfWithPageTreeCycle,
  pdfWithReferenceLoops,
  recording,
  recordResilience,
  REPO_ROOT,
  speak,
  startLocus,
  waitForFile,
  wavClaiming,
  webmDisguise,
  zipArchive,
  zipOf,
  type Client,
  type LocusProcess,
} from "@locus/testing";

/**
 * Hostile files: every kind of file the internet sends to hurt a reader, uploaded into one running
 * Locus with ordinary files in between. Each ends refused (4xx with a sentence) or `failed` with a
 * code and a reason, or, when the file is in fact harmless (a mislabelled picture, a PDF with
 * scripts), read as what it is. Nothing is written outside the data folder, the process never
 * restarts, and every ordinary file in between ends ready and searchable. The catalogue and its
 * outcomes go to test-artifacts/resilience/hostile-files.json.
 */
const MAX_UPLOAD = 4 * 1024 * 1024;

type Expected =
  | { refused: number; detail: RegExp }
  | { failed: string; message: RegExp }
  | { ready: string; name?: string };

interface Attack {
  name: string;
  filename: string;
  make: () => Promise<Buffer> | Buffer;
  expected: Expected;
}

const cleanPdf = (text: string) => makePdf({ pages: [pageWith(text, 3, 6)] });

/** One plain DOCX, written by LibreOffice once, that the document attacks are made from. */
let plainDocx: Promise<Buffer> | undefined;
const aPlainDocx = () => (plainDocx ??= makeTextDocument("docx", [["The gannet keeps a ledger of tides."]]));

const ATTACKS: Attack[] = [
  {
    name: "truncated PDF",
    filename: "cut.pdf",
    make: async () => {
      const pdf = await makePdf({ pages: Array.from({ length: 6 }, (_, i) => pageWith(`Cut page ${i}`, 2)) });
      return pdf.subarray(0, Math.floor(pdf.length * 0.6));
    },
    expected: { failed: "pdf_corrupt", message: /truncated/ },
  },
  {
    name: "zero-byte file",
    filename: "empty.pdf",
    make: () => Buffer.alloc(0),
    expected: { refused: 400, detail: /empty/ },
  },
  {
    name: "oversized file",
    filename: "huge.pdf",
    make: async () => Buffer.concat([await cleanPdf("Huge"), Buffer.alloc(MAX_UPLOAD, 0x20)]),
    expected: { refused: 413, detail: /larger than/ },
  },
  {
    name: "text pretending to be a PDF (read as the text it is)",
    filename: "fake.pdf",
    make: () => Buffer.from("%PDX not really\nJust words.\n"),
    expected: { ready: "document" },
  },
  {
    name: "HTML with a script, named .pdf (read as HTML; the script is never run nor indexed)",
    filename: "page.pdf",
    make: () =>
      Buffer.from("<!doctype html><html><script>alert(document.cookie)</script><p>Shown</p></html>"),
    expected: { ready: "document" },
  },
  {
    name: "SVG with an external entity, named .png",
    filename: "logo.png",
    make: () =>
      Buffer.from(
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>' +
          '<svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>',
      ),
    expected: { refused: 415, detail: /not supported/ },
  },
  {
    name: "ZIP archive disguised as a PDF",
    filename: "report.pdf",
    make: async () => zipArchive("report.pdf", await cleanPdf("Inside the archive")),
    expected: { refused: 415, detail: /application\/zip files are not supported/ },
  },
  {
    name: "Word document (a ZIP) named .pdf",
    filename: "letter.pdf",
    make: () => zipArchive("[Content_Types].xml", Buffer.from("<Types/>")),
    expected: { refused: 415, detail: /not supported/ },
  },
  {
    name: "gzip disguised as a recording",
    filename: "talk.mp3",
    make: async () => gzipped(await cleanPdf("Compressed")),
    expected: { refused: 415, detail: /gzip files are not supported/ },
  },
  {
    name: "PNG decompression bomb (20000 × 20000 pixels)",
    filename: "bomb.png",
    make: () => makeDecompressionBomb(),
    expected: { failed: "image_too_large", message: /20000 × 20000 pixels/ },
  },
  {
    name: "PDF decompression bomb (2 KB inflating to 1 GiB)",
    filename: "bomb.pdf",
    make: () => pdfFlateBomb(),
    expected: { failed: "pdf_too_complex", message: /decompression bomb/ },
  },
  {
    name: "PDF that runs JavaScript on opening",
    filename: "script.pdf",
    make: () => pdfWithJavaScript("Scripted heron notes"),
    expected: { ready: "pdf" },
  },
  {
    name: "PDF whose page tree contains itself",
    filename: "loop.pdf",
    make: () => pdfWithPageTreeCycle(),
    expected: { failed: "pdf_corrupt", message: /damaged/ },
  },
  {
    name: "PDF with self-referencing objects and cross-reference history",
    filename: "selfref.pdf",
    make: () => pdfWithReferenceLoops(),
    expected: { ready: "pdf" },
  },
  {
    name: "WAV declaring 37 hours and holding one second",
    filename: "long.wav",
    make: () => wavClaiming(37 * 3600),
    expected: { failed: "media_too_long", message: /minutes long/ },
  },
  {
    name: "MP4 declaring 40 days and holding one second",
    filename: "long.mp4",
    make: async () =>
      mp4Claiming(
        await makeVideo({
          format: "mp4",
          width: 160,
          height: 90,
          slides: [{ image: (await makeTextImage({ lines: ["Frame"], format: "png" })).data, seconds: 1 }],
        }),
        40 * 86_400,
      ),
    expected: { failed: "media_too_long", message: /minutes long/ },
  },
  {
    name: "PNG named .pdf (mislabelled, harmless)",
    filename: "scan.pdf",
    make: async () => (await makeTextImage({ lines: ["Mislabelled picture"], format: "png" })).data,
    expected: { ready: "image" },
  },
  {
    name: "FLAC named .jpg (mislabelled, harmless)",
    filename: "photo.jpg",
    make: () => encodeAudio(recording([1]), "flac"),
    expected: { ready: "audio" },
  },
  // Office documents: each is refused from its container's declared structure, before LibreOffice
  // opens it (services/extractor-document, packages/office-converter).
  {
    name: "DOCX zip bomb (a part declaring 4 GB unpacked)",
    filename: "bomb.docx",
    make: async () => declaringUnpackedSize(await aPlainDocx(), "word/document.xml", 0xfffffff0),
    expected: { failed: "document_too_large", message: /declares \d+ MB once unpacked.*Split it/ },
  },
  {
    name: "DOCX nested four deep (a document embedding a document embedding...)",
    filename: "nested.docx",
    make: async () => nestedDocx(await aPlainDocx(), 4),
    expected: { failed: "document_too_large", message: /holds packages nested 4 deep/ },
  },
  {
    name: "password-protected DOCX (the encrypted OOXML container)",
    filename: "secret.docx",
    make: () => encryptedOoxml(),
    expected: { failed: "document_encrypted", message: /protected with a password.*Remove the password/ },
  },
  {
    name: "password-protected ODT (encrypted parts in its manifest)",
    filename: "secret.odt",
    make: () => odtDeclaredEncrypted(),
    expected: { failed: "document_encrypted", message: /protected with a password.*Remove the password/ },
  },
  {
    name: "ODT with a Basic macro bound to its opening",
    filename: "macro.odt",
    // Had the macro run, it would have written beside the data folder, where the last test looks.
    make: () => odtWithLoadMacro(join(sandbox, "macro-ran"), "The macro document of puffins."),
    expected: {
      failed: "document_macros",
      message: /contains macros.*LOCUS_DOCUMENT_MACROS=refuse.*Save a copy without them/,
    },
  },
  {
    name: "plain ZIP named .docx",
    filename: "notes.docx",
    make: () => zipOf([{ name: "notes.txt", data: "Just a zip, no document." }]),
    expected: { refused: 415, detail: /application\/zip files are not supported/ },
  },
  {
    name: "compound file of another kind (an installer's shape) named .doc",
    filename: "setup.doc",
    make: () => compoundFileOfAnotherKind(),
    expected: {
      failed: "document_corrupt",
      message: /is a compound file .*not a Word, Excel or PowerPoint document/,
    },
  },
  // Hostile names on an ordinary PDF: path parts dropped, control characters removed, never a path.
  {
    name: "name climbing out with ../",
    filename: "../../../escape-slash.pdf",
    make: () => cleanPdf("Climbing name"),
    expected: { ready: "pdf", name: "escape-slash.pdf" },
  },
  {
    name: "name climbing out with ..\\",
    filename: "..\\..\\..\\escape-backslash.pdf",
    make: () => cleanPdf("Backslash name"),
    expected: { ready: "pdf", name: "escape-backslash.pdf" },
  },
  {
    name: "absolute path name",
    filename: "/etc/cron.d/escape-absolute",
    make: () => cleanPdf("Absolute name"),
    expected: { ready: "pdf", name: "escape-absolute" },
  },
  {
    name: "name with escaped line breaks (header injection)",
    filename: "a\r\nX-Injected: 1\r\n.pdf",
    make: () => cleanPdf("Injected name"),
    expected: { ready: "pdf", name: "aX-Injected: 1.pdf" },
  },
  {
    name: "name with bidirectional overrides (extension spoofing)",
    filename: "invoice\u202efdp.exe",
    make: () => cleanPdf("Spoofed name"),
    expected: { ready: "pdf", name: "invoicefdp.exe" },
  },
  {
    name: "name with a raw control character",
    filename: "bell\u0007.pdf",
    make: () => cleanPdf("Bell name"),
    expected: { refused: 400, detail: /parsing the body/ },
  },
  {
    name: "name of 1,000 characters",
    filename: `${"n".repeat(996)}.pdf`,
    make: () => cleanPdf("Long name"),
    expected: { ready: "pdf", name: `${"n".repeat(996)}.pdf` },
  },
  {
    name: "name of 2,000 characters",
    filename: `${"n".repeat(1996)}.pdf`,
    make: () => cleanPdf("Longer name"),
    expected: { refused: 400, detail: /longer than 1024/ },
  },
  {
    name: "name that is only dots",
    filename: "..",
    make: () => cleanPdf("Dots name"),
    // The multipart parser drops a file name of only dots, as if the part had none: a
    // validation error on the missing file, in FastAPI's shape.
    expected: { refused: 422, detail: /"loc":\["body","file"\],"msg":"Field required"/ },
  },
];

interface Outcome {
  attack: string;
  filename_length: number;
  bytes: number;
  status: number;
  final: string;
  code: string | null;
  message: string | null;
}

let sandbox: string;
let dataDir: string;
let locus: LocusProcess;
let c: Client;
const outcomes: Outcome[] = [];
const bystanders: { id: string; phrase: string }[] = [];

beforeAll(async () => {
  // The data folder sits alone in a sandbox folder: anything written beside it escaped.
  sandbox = mkdtempSync(join(tmpdir(), "locus-hostile-"));
  dataDir = join(sandbox, "data");
  mkdirSync(dataDir);
  locus = await startLocus({
    dataDir,
    env: {
      LOCUS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
      LOCUS_PDF_PAGE_TIMEOUT_MS: "10000",
      LOCUS_RATE_LIMIT_PRO: "1000",
    },
  });
  c = client(locus.baseUrl, (await createUserWithKey(dataDir, { plan: "pro" })).key);
}, 180_000);

afterAll(async () => {
  await locus?.stop();
  rmSync(sandbox, { recursive: true, force: true });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

it("ends every hostile file refused or failed with a reason (or read as what it is), while ordinary files keep moving", async () => {
  const pending: { attack: Attack; id: string; status: number; bytes: number }[] = [];
  for (const [i, attack] of ATTACKS.entries()) {
    const data = await attack.make();
    const res = await c.upload(data, attack.filename);
    const body = (await res.json()) as { file?: { id: string }; detail?: unknown };
    if ("refused" in attack.expected) {
      expect({ attack: attack.name, status: res.status }).toEqual({
        attack: attack.name,
        status: attack.expected.refused,
      });
      const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      expect(detail).toMatch(attack.expected.detail);
      outcomes.push({
        attack: attack.name,
        filename_length: attack.filename.length,
        bytes: data.length,
        status: res.status,
        final: "refused",
        code: null,
        message: detail,
      });
    } else {
      expect({ attack: attack.name, status: res.status }).toEqual({ attack: attack.name, status: 200 });
      pending.push({ attack, id: body.file!.id, status: res.status, bytes: data.length });
    }
    // An ordinary file after every attack: the queue must keep moving past each one.
    const phrase = `Bystander ${i} keeps the ledger of ${["otters", "kestrels", "voles", "newts"][i % 4]}`;
    const ok = await c.upload(await cleanPdf(phrase), `bystander-${i}.pdf`);
    expect(ok.status).toBe(200);
    bystanders.push({ id: ((await ok.json()) as { file: { id: string } }).file.id, phrase });
  }

  for (const { attack, id, status, bytes } of pending) {
    const f = (await waitForFile(c, id, 180_000)) as {
      status: string;
      file_type: string;
      original_name: string;
      error: { code: string; message: string } | null;
    };
    const expected = attack.expected;
    if ("failed" in expected) {
      expect({ attack: attack.name, status: f.status, code: f.error?.code }).toEqual({
        attack: attack.name,
        status: "failed",
        code: expected.failed,
      });
      expect(f.error?.message).toMatch(expected.message);
    } else if ("ready" in expected) {
      expect({ attack: attack.name, status: f.status, type: f.file_type }).toEqual({
        attack: attack.name,
        status: "ready",
        type: expected.ready,
      });
      if (expected.name !== undefined) expect(f.original_name).toBe(expected.name);
    }
    outcomes.push({
      attack: attack.name,
      filename_length: attack.filename.length,
      bytes,
      status,
      final: f.status,
      code: f.error?.code ?? null,
      message: f.error?.message ?? null,
    });
  }

  for (const { id, phrase } of bystanders) {
    expect(await waitForFile(c, id, 120_000)).toMatchObject({ status: "ready" });
    const found = (await (
      await c.get(`/api/search?q=${encodeURIComponent(`"${phrase}"`)}&limit=5`)
    ).json()) as { results: { file_id: string }[] };
    expect(found.results.map((r) => r.file_id)).toContain(id);
  }
  // The same process throughout: nothing crashed it.
  expect(locus.child.exitCode).toBeNull();
  expect((await fetch(`${locus.baseUrl}/healthz`)).status).toBe(200);
}, 600_000);

it("reads the scripted PDF's text and never runs its script", async () => {
  const found = (await (await c.get(`/api/search?q=${encodeURIComponent("scripted heron")}`)).json()) as {
    results: { content: string }[];
  };
  expect(found.results[0]?.content).toMatch(/Scripted heron notes/);
  // The script would have called out to port 9 and alerted: no log line mentions either.
  expect(locus.logs.join("\n")).not.toMatch(/pwned|steal/);
});

it("never follows a playlist or concat list dressed as a recording, to a local file or a URL", async () => {
  // A recording outside any upload, worth hearing: had ffmpeg followed a list to it, its words
  // would have become passages. And a loopback server that notes every request made to it.
  const outside = mkdtempSync(join(tmpdir(), "locus-canary-"));
  const canary = join(outside, "canary.wav");
  writeFileSync(canary, recording([0.5, await speak("The canary sings of copper lanterns."), 0.5]));
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/segment.wav`;
  const lists = [
    {
      name: "HLS playlist dressed as MP3",
      filename: "song.mp3",
      data: mp3Disguise(hlsPlaylist([canary, url])),
    },
    {
      name: "concat list dressed as MP3",
      filename: "mix.mp3",
      data: mp3Disguise(concatList([canary, "canary.wav", url])),
    },
    {
      name: "HLS playlist dressed as WebM",
      filename: "clip.webm",
      data: webmDisguise(hlsPlaylist([canary, url])),
    },
    {
      name: "concat list dressed as WebM",
      filename: "cut.webm",
      data: webmDisguise(concatList([canary, url])),
    },
  ];
  try {
    for (const list of lists) {
      const res = await c.upload(list.data, list.filename);
      expect({ attack: list.name, status: res.status }).toEqual({ attack: list.name, status: 200 });
      const { file } = (await res.json()) as { file: { id: string } };
      const f = (await waitForFile(c, file.id, 120_000)) as {
        status: string;
        error: { code: string; message: string } | null;
      };
      expect({ attack: list.name, status: f.status }).toEqual({ attack: list.name, status: "failed" });
      expect(["media_unsupported", "media_corrupt"]).toContain(f.error?.code);
      outcomes.push({
        attack: list.name,
        filename_length: list.filename.length,
        bytes: list.data.length,
        status: res.status,
        final: f.status,
        code: f.error?.code ?? null,
        message: f.error?.message ?? null,
      });
    }
    expect(requests).toEqual([]);
    recordResilience("audit-media-references", {
      lists: lists.length,
      failed: lists.length,
      requests_to_named_url: requests.length,
    });
    const heard = (await (await c.get("/api/search?q=copper+lanterns")).json()) as { results: unknown[] };
    expect(heard.results).toEqual([]);
  } finally {
    server.close();
    rmSync(outside, { recursive: true, force: true });
  }
}, 300_000);

it("never fetches what a document links: a picture and a template at a loopback URL", async () => {
  // These end ready, unlike the attacks above: a link is not a reason to refuse a document, whose
  // own text is the user's to search. The link is simply never followed (LibreOffice converts
  // without network), so the server that would have served the picture hears nothing. Unguarded,
  // LibreOffice fetches both pictures (office-converter's tests hold that control).
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const documents = [
    {
      name: "ODT showing a picture linked from a loopback URL",
      filename: "linked.odt",
      phrase: "The tern charts the linked shoals",
      make: (phrase: string) => odtLinkingImage(`${baseUrl}odt-picture.png`, phrase),
    },
    {
      name: "DOCX showing a picture and attaching a template, both linked from a loopback URL",
      filename: "linked.docx",
      phrase: "The cormorant counts the harbour lamps",
      make: async (phrase: string) => docxLinkingRemote(await makeTextDocument("docx", [[phrase]]), baseUrl),
    },
  ];
  try {
    for (const document of documents) {
      const data = await document.make(document.phrase);
      const res = await c.upload(data, document.filename);
      expect({ attack: document.name, status: res.status }).toEqual({ attack: document.name, status: 200 });
      const { file } = (await res.json()) as { file: { id: string } };
      const f = (await waitForFile(c, file.id, 180_000)) as {
        status: string;
        file_type: string;
        error: { code: string; message: string } | null;
      };
      expect({ attack: document.name, status: f.status, type: f.file_type }).toEqual({
        attack: document.name,
        status: "ready",
        type: "document",
      });
      const found = (await (
        await c.get(`/api/search?q=${encodeURIComponent(`"${document.phrase}"`)}&limit=5`)
      ).json()) as { results: { file_id: string }[] };
      expect({ attack: document.name, found: found.results.map((r) => r.file_id) }).toEqual({
        attack: document.name,
        found: expect.arrayContaining([file.id]),
      });
      outcomes.push({
        attack: document.name,
        filename_length: document.filename.length,
        bytes: data.length,
        status: res.status,
        final: f.status,
        code: f.error?.code ?? null,
        message: f.error?.message ?? null,
      });
    }
    expect(requests).toEqual([]);
    recordResilience("audit-document-links", {
      documents: documents.length,
      ready: documents.length,
      requests_to_linked_url: requests.length,
    });
  } finally {
    server.close();
  }
}, 300_000);

it("writes nothing outside the data folder, and nothing under a name the uploader chose", () => {
  const everything = readdirSync(sandbox);
  expect(everything).toEqual(["data"]);
  const files = listFiles(dataDir).map((f) => relative(dataDir, f));
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    expect(file.startsWith("..")).toBe(false);
    expect(file).not.toMatch(/escape|passwd|cron|bystander|invoice|\.\./);
  }
  mkdirSync(join(REPO_ROOT, "test-artifacts/resilience"), { recursive: true });
  writeFileSync(
    join(REPO_ROOT, "test-artifacts/resilience/hostile-files.json"),
    `${JSON.stringify(
      {
        files_attacked: outcomes.length,
        refused: outcomes.filter((o) => o.final === "refused").length,
        failed: outcomes.filter((o) => o.final === "failed").length,
        read_as_what_they_are: outcomes.filter((o) => o.final === "ready").length,
        bystanders_ready: bystanders.length,
        outcomes,
      },
      null,
      2,
    )}\n`,
  );
});
