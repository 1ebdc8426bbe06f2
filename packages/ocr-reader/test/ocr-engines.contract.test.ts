import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtractedPassage } from "@locus/contracts";
import { makeTextImage, QUALITY_FIXTURES, seededRandom, type TextImageSpec } from "@locus/testing";
import {
  createOcrEngine,
  DEFAULT_IMAGE_LIMITS,
  DEFAULT_OCR_PASSAGE_OPTIONS,
  extractImage,
  findTesseract,
  installedLanguages,
  NativeOcrEngine,
  OcrSetupError,
  OcrTimeoutError,
  openImage,
  TesseractUnavailableError,
  type OcrEngine,
  type OcrLine,
  type OcrModelSource,
  type OcrPage,
} from "../src/index.ts";
import { parseHocr } from "../src/hocr.ts";
import { childProcesses, NATIVE_MISSING, SKIPPED_NATIVE } from "./engines.ts";

const nativeSuite = NATIVE_MISSING ? describe.skip : describe;
const nativeTitle = (title: string) => (NATIVE_MISSING ? `${title} (${SKIPPED_NATIVE})` : title);

/** Real page images: manuals from Debian packages rendered at 150 dpi (bench/fixtures/quality). */
const FIXTURES = ["fontconfig-user-page.png", "libtasn1-page-photo.jpg", "flite-page.png"];

const WORDS = (
  "the invoice payment account office transfer within thirty days contact number report river " +
  "garden morning letter table window station market history summer winter station public " +
  "service library council notice meeting evening answer question reason season figure"
).split(" ");

/** Lines of English words, the same on every run. */
function englishLines(seed: number, count: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const words: string[] = [];
    while (words.join(" ").length < 55) words.push(WORDS[Math.floor(random() * WORDS.length)] ?? "the");
    return words.join(" ");
  });
}

const PAGE_150_DPI = { width: 1240, height: 1754, fontPx: 23 } as const;

/** Generated pages, like the extraction tests' and the OCR benchmark's. */
const GENERATED: [string, TextImageSpec][] = [
  ["a clean 150-dpi page (PNG)", { lines: englishLines(1, 30), ...PAGE_150_DPI }],
  [
    "a 150-dpi scan, noise ±20, JPEG q80",
    { lines: englishLines(2, 30), ...PAGE_150_DPI, noise: 20, format: "jpeg", quality: 80 },
  ],
  [
    "a phone photo turned 2°, noise ±30, JPEG q75",
    { lines: englishLines(3, 30), ...PAGE_150_DPI, rotateDeg: 2, noise: 30, format: "jpeg", quality: 75 },
  ],
  [
    "a short note turned -4°, noise ±40, JPEG q70",
    { lines: englishLines(4, 3), rotateDeg: -4, noise: 40, format: "jpeg", quality: 70 },
  ],
];

/** The image as the extractors hand it to the engine: its first page, prepared (a grey PGM). */
async function prepared(data: Buffer): Promise<Buffer> {
  return (await (await openImage(data, DEFAULT_IMAGE_LIMITS)).page(1)).pgm;
}

const words = (lines: readonly { text: string }[]) => lines.flatMap((l) => l.text.split(/\s+/));

/** The longest common subsequence of two word lists, over the longer's length. */
function sameWords(a: readonly string[], b: readonly string[]): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (const word of a) {
    const row = [0];
    for (let j = 1; j <= b.length; j++) {
      row[j] = word === b[j - 1] ? (prev[j - 1] ?? 0) + 1 : Math.max(prev[j] ?? 0, row[j - 1] ?? 0);
    }
    prev = row;
  }
  return (prev[b.length] ?? 0) / Math.max(a.length, b.length, 1);
}

type Box = OcrLine["bbox"];

function overlap(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.width * a.height + b.width * b.height - w * h);
}

/** How far apart two boxes' edges are, in pixels: the largest of the four. */
const edgeDistance = (a: Box, b: Box) =>
  Math.max(
    Math.abs(a.x - b.x),
    Math.abs(a.y - b.y),
    Math.abs(a.x + a.width - b.x - b.width),
    Math.abs(a.y + a.height - b.y - b.height),
  );

/**
 * The two lists' items paired in order (the longest such pairing), by `same`; the rest are left
 * unpaired, each list's in its own array.
 */
function align<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean) {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = table[i] as number[];
      row[j] = same(a[i] as T, b[j] as T)
        ? (table[i + 1]?.[j + 1] ?? 0) + 1
        : Math.max(table[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const pairs: [T, T][] = [];
  const onlyA: T[] = [];
  const onlyB: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (same(a[i] as T, b[j] as T) && table[i]?.[j] === (table[i + 1]?.[j + 1] ?? 0) + 1) {
      pairs.push([a[i++] as T, b[j++] as T]);
    } else if ((table[i + 1]?.[j] ?? 0) >= (table[i]?.[j + 1] ?? 0)) onlyA.push(a[i++] as T);
    else onlyB.push(b[j++] as T);
  }
  onlyA.push(...a.slice(i));
  onlyB.push(...b.slice(j));
  return { pairs, onlyA, onlyB };
}

/** How the native engine's reading of an image differs from tesseract.js's. */
function compareReadings(wasm: OcrPage, native: OcrPage) {
  const { pairs, onlyA, onlyB } = align(wasm.lines, native.lines, (a, b) => overlap(a.bbox, b.bbox) > 0.5);
  const confidence = pairs.map(([a, b]) => Math.abs(a.confidence - b.confidence));
  return {
    lines: [wasm.lines.length, native.lines.length],
    /** Lines one engine found and the other did not (or found cut differently). */
    unpaired: [
      ...onlyA.map((l) => `wasm only: "${l.text}"`),
      ...onlyB.map((l) => `native only: "${l.text}"`),
    ],
    sameText: pairs.filter(([a, b]) => a.text === b.text).length / Math.max(pairs.length, 1),
    sameWords: sameWords(words(wasm.lines), words(native.lines)),
    boxEdgePx: Math.max(0, ...pairs.map(([a, b]) => edgeDistance(a.bbox, b.bbox))),
    confidence: {
      max: Math.max(0, ...confidence),
      mean: confidence.reduce((s, c) => s + c, 0) / Math.max(confidence.length, 1),
    },
    rotation: [wasm.rotation, native.rotation],
  };
}

interface Reading {
  image: Buffer;
  page: OcrPage;
}

/** The engine, keeping every image it is given and what it read. */
function recorded(engine: OcrEngine): { engine: OcrEngine; readings: Reading[] } {
  const readings: Reading[] = [];
  return {
    readings,
    engine: {
      kind: engine.kind,
      description: engine.description,
      workers: engine.workers,
      recognize: async (image) => {
        const page = await engine.recognize(image);
        readings.push({ image, page });
        return page;
      },
      close: () => engine.close(),
    },
  };
}

async function passagesOf(engine: OcrEngine, data: Buffer): Promise<ExtractedPassage[]> {
  const passages: ExtractedPassage[] = [];
  for await (const passage of extractImage(data, engine)) passages.push(passage);
  return passages;
}

interface PageLine {
  number: number;
  text: string;
  box: Box;
}

/** The numbered page lines the passages were cut from: one content line per page line. */
function pageLines(passages: readonly ExtractedPassage[]): PageLine[] {
  const lines = new Map<number, PageLine>();
  for (const { content, locator } of passages) {
    content.split("\n").forEach((text, i) => {
      const box = locator.line_boxes?.[i];
      const number = (locator.line ?? 0) + i;
      if (box) lines.set(number, { number, text, box });
    });
  }
  return [...lines.values()].sort((a, b) => a.number - b.number);
}

/**
 * How the passages of the native engine differ from tesseract.js's: the page lines only one of them
 * kept (each with both engines' confidence in it, from their readings), and, for the passages that
 * span the same lines in both, the largest differences of box and confidence.
 */
function comparePassages(
  wasm: { passages: ExtractedPassage[]; readings: Reading[] },
  native: { passages: ExtractedPassage[]; readings: Reading[] },
) {
  const a = pageLines(wasm.passages);
  const b = pageLines(native.passages);
  const { pairs, onlyA, onlyB } = align(a, b, (x, y) => overlap(x.box, y.box) > 0.5);
  // Each engine's confidence in a line, from the reading the passages came from (its last).
  const confidenceIn = (readings: Reading[], text: string) =>
    readings.at(-1)?.page.lines.find((l) => l.text === text)?.confidence;
  const unpaired = [
    ...onlyA.map((l) => ["wasm", l] as const),
    ...onlyB.map((l) => ["native", l] as const),
  ].map(([kept, line]) => ({
    kept,
    line: line.number,
    text: line.text,
    wasm: confidenceIn(wasm.readings, line.text),
    native: confidenceIn(native.readings, line.text),
  }));
  // Passages are the same when they span the same page lines (a line kept by one engine only
  // numbers the lines after it differently, and cuts the windows differently from there).
  const asWasm = new Map(pairs.map(([x, y]) => [y.number, x.number]));
  const span = (line?: number, end?: number) => `${line ?? 0}-${end ?? 0}`;
  const theirs = new Map(
    native.passages.map((q) => [
      span(asWasm.get(q.locator.line ?? 0), asWasm.get(q.locator.line_end ?? 0)),
      q,
    ]),
  );
  const same = wasm.passages.flatMap((p) => {
    const q = theirs.get(span(p.locator.line, p.locator.line_end));
    return q ? [[p, q] as const] : [];
  });
  // Up to it, both number the lines alike.
  const firstUnpaired = Math.min(Infinity, ...[...onlyA, ...onlyB].map((l) => l.number));
  const box = (p: ExtractedPassage) => p.locator.bbox ?? { x: 0, y: 0, width: 0, height: 0 };
  return {
    lines: [a.length, b.length],
    unpaired,
    renumbered: pairs.filter(([x, y]) => x.number !== y.number).length,
    sameWords: sameWords(words(a), words(b)),
    lineBoxEdgePx: Math.max(0, ...pairs.map(([x, y]) => edgeDistance(x.box, y.box))),
    passages: [wasm.passages.length, native.passages.length],
    /** Passages spanning the same page lines in both. */
    sameSpan: same.length,
    /** Of the passages before the first line kept by one engine only, how many are not the same. */
    differentBefore: wasm.passages.filter(
      (p) => (p.locator.line_end ?? 0) < firstUnpaired && !same.some(([x]) => x === p),
    ).length,
    passageBoxEdgePx: Math.max(0, ...same.map(([p, q]) => edgeDistance(box(p), box(q)))),
    passageConfidence: Math.max(
      0,
      ...same.map(([p, q]) => Math.abs((p.locator.confidence ?? 0) - (q.locator.confidence ?? 0))),
    ),
    passageSameWords: Math.min(
      1,
      ...same.map(([p, q]) => sameWords(p.content.split(/\s+/), q.content.split(/\s+/))),
    ),
  };
}

const pct = (share: number) => `${(share * 100).toFixed(1)}%`;

function describeReading(d: ReturnType<typeof compareReadings>): string {
  return (
    `${d.lines[0]}/${d.lines[1]} lines (wasm/native), ${d.unpaired.length} found by one only` +
    `${d.unpaired.length ? ` [${d.unpaired.join("; ")}]` : ""}, ${pct(d.sameText)} of lines word for word, ` +
    `${pct(d.sameWords)} of words, boxes ≤ ${d.boxEdgePx} px apart, confidence ≤ ${d.confidence.max.toFixed(3)} ` +
    `apart (mean ${d.confidence.mean.toFixed(4)}), straightened by ${d.rotation.map((r) => r.toFixed(4)).join("/")} rad`
  );
}

function describePassages(d: ReturnType<typeof comparePassages>): string {
  const unpaired = d.unpaired.map(
    (l) =>
      `line ${l.line} "${l.text}" kept by ${l.kept} only (confidence wasm ${l.wasm?.toFixed(3) ?? "-"}, ` +
      `native ${l.native?.toFixed(3) ?? "-"}; kept from ${DEFAULT_OCR_PASSAGE_OPTIONS.minConfidence})`,
  );
  return (
    `${d.lines[0]}/${d.lines[1]} page lines, ${unpaired.length ? unpaired.join("; ") : "the same lines"}, ` +
    `${d.renumbered} numbered differently, ${pct(d.sameWords)} of words, line boxes ≤ ${d.lineBoxEdgePx} px apart; ` +
    `${d.passages[0]}/${d.passages[1]} passages, ${d.sameSpan} spanning the same lines` +
    (d.sameSpan === 0
      ? ""
      : `: words ≥ ${pct(d.passageSameWords)} the same, boxes ≤ ${d.passageBoxEdgePx} px, ` +
        `confidence ≤ ${d.passageConfidence.toFixed(2)} apart`)
  );
}

/**
 * The models both engines are compared with: the npm packages' (best, integer), and the tesseract
 * command's own where it has English (Debian's fast model). The smaller fast network carries the
 * two engines' differences in arithmetic further into a line's confidence: up to ~0.2 on a line
 * (0.01 on average) against 0.05 with the best model, the words and boxes as alike.
 */
const MODEL_SOURCES: {
  models: OcrModelSource;
  title: string;
  lineConfidence: number;
  passageConfidence: number;
}[] = [
  { models: "packaged", title: "the npm packages' models", lineConfidence: 0.05, passageConfidence: 0.03 },
  ...(NATIVE_MISSING || !installedLanguages("tesseract")?.codes.has("eng")
    ? []
    : [
        {
          models: "system" as const,
          title: "the tesseract command's own models",
          lineConfidence: 0.25,
          passageConfidence: 0.05,
        },
      ]),
];

nativeSuite.each(MODEL_SOURCES)(
  nativeTitle("native and wasm engines read the same page alike, with $title"),
  ({ models, lineConfidence, passageConfidence }) => {
    let wasm: OcrEngine;
    let native: OcrEngine;
    const differences: string[] = [];
    beforeAll(() => {
      wasm = createOcrEngine({ languages: ["eng"], workers: 2, engine: "wasm", models });
      native = createOcrEngine({ languages: ["eng"], workers: 2, engine: "native", models });
    });
    afterAll(async () => {
      await Promise.all([wasm.close(), native.close()]);
      console.log(
        `How the native engine's readings differ from tesseract.js's (${models} models):\n${differences.join("\n")}`,
      );
    });

    /*
     * The bounds: lines paired by their boxes (overlapping by more than half); at most 2 lines a page
     * found by one engine only; of the paired lines, 97% of the words the same, boxes within 4 px,
     * confidence within `lineConfidence` (0.01 on average), the same straightening within 0.005 rad.
     */
    function expectAlike(diff: ReturnType<typeof compareReadings>): void {
      expect(diff.unpaired.length).toBeLessThanOrEqual(2);
      expect(diff.sameWords).toBeGreaterThanOrEqual(0.97);
      expect(diff.boxEdgePx).toBeLessThanOrEqual(4);
      expect(diff.confidence.max).toBeLessThanOrEqual(lineConfidence);
      expect(diff.confidence.mean).toBeLessThanOrEqual(0.01);
      expect(Math.abs((diff.rotation[0] ?? 0) - (diff.rotation[1] ?? 0))).toBeLessThanOrEqual(0.005);
    }

    it.each(FIXTURES)(
      "the real page %s, through extractImage: the same readings, page lines, passages, locators and confidence",
      async (name) => {
        const data = readFileSync(join(QUALITY_FIXTURES, name));
        const a = recorded(wasm);
        const b = recorded(native);
        const [pa, pb] = await Promise.all([passagesOf(a.engine, data), passagesOf(b.engine, data)]);

        // Every image both were given: the page as it is, and scaled up when its text is small.
        const readings = a.readings.flatMap((x) => {
          const y = b.readings.find((r) => r.image.equals(x.image));
          return y ? [compareReadings(x.page, y.page)] : [];
        });
        const passages = comparePassages(
          { passages: pa, readings: a.readings },
          { passages: pb, readings: b.readings },
        );
        differences.push(
          `${name}: read ${a.readings.length}/${b.readings.length} times (wasm/native), ${readings.length} the same image`,
          ...readings.map((r, i) => `  reading ${i + 1}: ${describeReading(r)}`),
          `  passages: ${describePassages(passages)}`,
        );

        // Both read the same images: they decided alike whether the text is small.
        expect(readings.length).toBe(a.readings.length);
        expect(b.readings.length).toBe(a.readings.length);
        readings.forEach(expectAlike);
        if (name === "libtasn1-page-photo.jpg") {
          // The photo leans 1.5°: both read it again turned straight, by the same angle the same way
          // (turned the other way, the boxes would be tens of pixels off at the page's edges).
          expect(Math.abs(readings[0]?.rotation[0] ?? 0)).toBeGreaterThan(0.02);
        }
        // The lines only one engine kept are the ones at the confidence threshold (0.5), where a
        // difference in the last digits decides; at most 2 a page.
        expect(passages.unpaired.length).toBeLessThanOrEqual(2);
        for (const line of passages.unpaired) {
          expect(
            Math.abs((line[line.kept] ?? 0) - DEFAULT_OCR_PASSAGE_OPTIONS.minConfidence),
          ).toBeLessThanOrEqual(0.05);
        }
        expect(passages.sameWords).toBeGreaterThanOrEqual(0.97);
        expect(passages.lineBoxEdgePx).toBeLessThanOrEqual(4);
        // A line one engine did not keep still has its number: every other line is numbered alike.
        expect(passages.renumbered).toBe(0);
        if (passages.unpaired.length === 0) {
          // The same lines: the same passages, each spanning the same lines.
          expect(passages.sameSpan).toBe(pa.length);
          expect(pb.length).toBe(pa.length);
        }
        // Otherwise the passages up to the first line kept by one engine only are the same ones.
        expect(passages.differentBefore).toBe(0);
        // Passages spanning the same lines: the same words, box and confidence, within bounds.
        expect(passages.passageSameWords).toBeGreaterThanOrEqual(0.9);
        expect(passages.passageBoxEdgePx).toBeLessThanOrEqual(4);
        expect(passages.passageConfidence).toBeLessThanOrEqual(passageConfidence);
      },
    );

    it.each(GENERATED)(
      "the generated page, %s: the same lines, words, boxes, confidences and straightening",
      async (name, spec) => {
        const pgm = await prepared((await makeTextImage(spec)).data);
        const [a, b] = await Promise.all([wasm.recognize(pgm), native.recognize(pgm)]);
        expect(a.lines.length).toBeGreaterThan(0);
        const diff = compareReadings(a, b);
        differences.push(`generated, ${name}: ${describeReading(diff)}`);
        expectAlike(diff);
      },
      // A hang detector, not a speed check: a noisy photo is read twice, by two engines at once,
      // and took over 60 s in a fresh clone's CI run with the e2e suites beside it.
      180_000,
    );
  },
);

nativeSuite(nativeTitle("the native engine's processes"), () => {
  let page: Buffer;
  beforeAll(async () => {
    page = await prepared(readFileSync(join(QUALITY_FIXTURES, "flite-page.png")));
  });

  /** Waits until this process runs `count` tesseract children. */
  async function running(count: number): Promise<number[]> {
    // A generous deadline: on a busy CI a process may take seconds to start.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      const found = childProcesses("tesseract");
      if (found.length >= count) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`never saw ${count} tesseract processes`);
  }

  it("kills the process of an image that uses too much processor time, and keeps serving", async () => {
    // A limit of processor time, which a one-line image (about 0.3 s) stays well under however
    // loaded the machine: waiting for a core does not count (as wall-clock time, 1.5 s was once too
    // short for the small images when the test suites ran side by side, LibreOffice's among them).
    const impatient = createOcrEngine({ languages: ["eng"], workers: 1, timeoutMs: 1500, engine: "native" });
    try {
      // Started on a small image first (the models unpacked), so the time limit falls on reading:
      // a page drawn four times as large needs several seconds of processor time.
      await impatient.recognize((await makeTextImage({ lines: ["warm"] })).data);
      const large = (
        await (await openImage(readFileSync(join(QUALITY_FIXTURES, "flite-page.png")))).page(1, 4)
      ).pgm;
      const reading = impatient.recognize(large);
      const [pid] = await running(1);
      await expect(reading).rejects.toBeInstanceOf(OcrTimeoutError);
      expect(childProcesses("tesseract")).not.toContain(pid);
      const { data } = await makeTextImage({ lines: ["read after the timeout"] });
      expect((await impatient.recognize(data)).lines.map((l) => l.text)).toEqual(["read after the timeout"]);
    } finally {
      await impatient.close();
    }
  });

  it("leaves no process running once closed, and rejects the images it was reading or held", async () => {
    const engine = createOcrEngine({ languages: ["eng"], workers: 2, engine: "native", models: "packaged" });
    // Two being read, one waiting; each answer is awaited from the start.
    const readings = [page, page, page].map((image) =>
      expect(engine.recognize(image)).rejects.toThrow("The OCR engine is closed."),
    );
    const pids = await running(2);
    // The models it reads, unpacked into a folder of the engine's own: removed on close too.
    const args = readFileSync(`/proc/${pids[0]}/cmdline`, "utf8").split("\0");
    const tessdata = args[args.indexOf("--tessdata-dir") + 1] ?? "";
    expect(existsSync(join(tessdata, "eng.traineddata"))).toBe(true);
    await engine.close();
    await Promise.all(readings);
    const left = childProcesses("tesseract");
    for (const pid of pids) expect(left).not.toContain(pid);
    expect(existsSync(tessdata)).toBe(false);
    await expect(engine.recognize(page)).rejects.toThrow("The OCR engine is closed.");
  });

  (installedLanguages("tesseract")?.codes.has("eng") ? it : it.skip)(
    "reads the command's own models where they lie, copying nothing (skipped where it has no English model)",
    async () => {
      const installed = installedLanguages("tesseract");
      const engine = createOcrEngine({ languages: ["eng"], workers: 1, engine: "native", models: "system" });
      try {
        expect(engine.description).toContain(
          `models: eng from ${join(installed?.folder ?? "", "eng.traineddata")}`,
        );
        const reading = engine.recognize(page);
        // Still awaited below; a failed expectation first must not leave it rejected unheard.
        reading.catch(() => undefined);
        const [pid] = await running(1);
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        expect(args[args.indexOf("--tessdata-dir") + 1]).toBe(installed?.folder);
        expect((await reading).lines.length).toBeGreaterThan(30);
      } finally {
        await engine.close();
      }
      expect(existsSync(join(installed?.folder ?? "", "eng.traineddata"))).toBe(true);
    },
  );

  it("runs each process on one core, with the image on its standard input", async () => {
    const engine = createOcrEngine({ languages: ["eng"], workers: 1, engine: "native" });
    try {
      const reading = engine.recognize(page);
      const [pid] = await running(1);
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      expect(environ).toContain("OMP_THREAD_LIMIT=1");
      expect(args.slice(1, 3)).toEqual(["stdin", "stdout"]);
      expect((await reading).lines.length).toBeGreaterThan(30);
    } finally {
      await engine.close();
    }
  });
});

describe("the native engine, given a tesseract command that misbehaves", () => {
  let dir: string;
  /** A stand-in for tesseract that answers --version as Tesseract 5 and runs `body` for an image. */
  const fake = (name: string, body: string) => {
    const path = join(dir, name);
    writeFileSync(
      path,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo "tesseract 5.3.0"; exit 0; fi\n${body}\n`,
    );
    chmodSync(path, 0o755);
    return path;
  };
  let image: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "locus-fake-tesseract-"));
    image = await prepared((await makeTextImage({ lines: ["a line of text"] })).data);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("ends one that writes without end, and says so", async () => {
    const engine = new NativeOcrEngine({
      languages: ["eng"],
      models: "packaged",
      workers: 1,
      tesseract: fake("flood", "cat >/dev/null; exec yes '<span class=\"ocrx_word\">x</span>'"),
    });
    try {
      await expect(engine.recognize(image)).rejects.toThrow("tesseract wrote more than 64 MB for one image.");
    } finally {
      await engine.close();
    }
  });

  it("passes on why one failed (the end of what it said), and reads the next image with a new one", async () => {
    const engine = new NativeOcrEngine({
      languages: ["eng"],
      models: "packaged",
      workers: 1,
      tesseract: fake("fail", 'cat >/dev/null; echo "Error in pixReadMem: unknown format" >&2; exit 1'),
    });
    try {
      await expect(engine.recognize(image)).rejects.toThrow(
        "tesseract exited with code 1: Error in pixReadMem: unknown format",
      );
      await expect(engine.recognize(image)).rejects.toThrow("tesseract exited with code 1");
    } finally {
      await engine.close();
    }
  });

  it("gives it nothing that is not an image: no list of file names on its standard input", async () => {
    // Tesseract takes input it does not know for a list of images to read, one path a line.
    const listed = join(dir, "listed.png");
    writeFileSync(listed, (await makeTextImage({ lines: ["a file on the server"] })).data);
    const engine = new NativeOcrEngine({
      languages: ["eng"],
      models: "packaged",
      workers: 1,
      tesseract: fake("record", `cat >"${dir}/given"`),
    });
    try {
      for (const bytes of [`\x89PNG\n${listed}\n`, `GIF8\n${listed}\n`, `${listed}\n`, ""]) {
        await expect(engine.recognize(Buffer.from(bytes, "latin1"))).rejects.toThrow(
          "The recogniser cannot read this image",
        );
      }
      expect(existsSync(join(dir, "given"))).toBe(false);
    } finally {
      await engine.close();
    }
  });
});

describe("choosing the engine (LOCUS_OCR_ENGINE)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "locus-fake-tesseract-"));
    // A Tesseract 3, which has no LSTM recogniser for the models.
    writeFileSync(join(dir, "tesseract"), '#!/bin/sh\necho "tesseract 3.05.02"\necho " leptonica-1.74.4"\n');
    chmodSync(join(dir, "tesseract"), 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("native without the tesseract command stops at start with a message for the operator", () => {
    const make = () =>
      createOcrEngine({ languages: ["eng"], engine: "native", tesseractPath: "/nonexistent/tesseract" });
    expect(make).toThrow(TesseractUnavailableError);
    expect(make).toThrow(OcrSetupError);
    expect(make).toThrow(
      "The native OCR engine needs the tesseract command, Tesseract 4 or later, and /nonexistent/tesseract was not found. " +
        "Install it (Debian: apt-get install tesseract-ocr), set LOCUS_TESSERACT_PATH to it, " +
        "or set LOCUS_OCR_ENGINE=wasm (or auto) to read images with tesseract.js instead.",
    );
  });

  it("looks the command up on PATH, and says so when it is not there", () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      expect(() => createOcrEngine({ languages: ["eng"], engine: "native" })).toThrow(
        '"tesseract" (looked up on PATH) was not found',
      );
      const auto = createOcrEngine({ languages: ["eng"], engine: "auto" });
      expect(auto.kind).toBe("wasm");
      expect(auto.description).toMatch(
        /^tesseract\.js [\d.]+ \(WebAssembly; models: eng from @tesseract\.js-data\/eng \(4\.0\.0_best_int\)\): no native Tesseract to use: .*was not found$/,
      );
      void auto.close();
    } finally {
      process.env.PATH = path;
    }
  });

  it("refuses a Tesseract older than 4, and auto falls back to tesseract.js", () => {
    const fake = join(dir, "tesseract");
    expect(() => findTesseract(fake)).toThrow(`${fake} is Tesseract 3.05.02`);
    expect(() => new NativeOcrEngine({ languages: ["eng"], tesseract: fake })).toThrow(OcrSetupError);
    const auto = createOcrEngine({ languages: ["eng"], engine: "auto", tesseractPath: fake });
    expect(auto.kind).toBe("wasm");
    void auto.close();
  });

  it("wasm is tesseract.js whatever is installed", async () => {
    const engine = createOcrEngine({ languages: ["eng"], engine: "wasm" });
    expect(engine.kind).toBe("wasm");
    expect(engine.description).toMatch(/^tesseract\.js \d+\.\d+\.\d+ \(WebAssembly; models: eng from .*\)$/);
    await engine.close();
  });

  (NATIVE_MISSING ? it.skip : it)(
    nativeTitle("auto prefers the tesseract command where it works"),
    async () => {
      const engine = createOcrEngine({ languages: ["eng"], engine: "auto" });
      expect(engine.kind).toBe("native");
      expect(engine.description).toMatch(
        /^tesseract \d+\.\d+\.\d+ \(native, \/.*tesseract; models: eng from .*\)$/,
      );
      await engine.close();
    },
  );
});

describe("hOCR, as Tesseract writes it", () => {
  const hocr = `<?xml version="1.0" encoding="UTF-8"?>
<html><body>
  <div class='ocr_page' id='page_1' title='image "stdin"; bbox 0 0 800 600; ppageno 0; scan_res 300 300'>
   <div class='ocr_carea' id='block_1_1' title="bbox 10 20 400 80">
    <p class='ocr_par' id='par_1_1' lang='eng' title="bbox 10 20 400 80">
     <span class='ocr_line' id='line_1_1' title="bbox 10 20 400 40; baseline 0.01 -5; x_size 21; x_descenders 5; x_ascenders 6">
      <span class='ocrx_word' id='word_1_1' title='bbox 10 20 60 40; x_wconf 90'>Tom&amp;Jerry&#39;s</span>
      <span class='ocrx_word' id='word_1_2' title='bbox 70 20 120 40; x_wconf 80'>&lt;b&gt;</span>
      <span class='ocrx_word' id='word_1_3' title='bbox 130 20 180 40; x_wconf 70'><strong>&quot;x&#x27;&quot;</strong></span>
     </span>
     <span class='ocr_header' id='line_1_2' title="bbox 10 50 400 80; baseline 0 -4; x_size 30">
      <span class='ocrx_word' id='word_1_4' title='bbox 10 50 100 80; x_wconf 96'>Heading</span>
     </span>
     <span class='ocr_line' id='line_1_3' title="bbox 10 90 20 95; baseline 0 0">
      <span class='ocrx_word' id='word_1_5' title='bbox 10 90 20 95; x_wconf 10'> </span>
     </span>
    </p>
   </div>
  </div>
</body></html>`;

  it("reads lines in order, words decoded, the mean word confidence, and the baseline's ends", () => {
    expect(parseHocr(hocr)).toEqual([
      {
        text: "Tom&Jerry's <b> \"x'\"",
        confidence: 80,
        bbox: { x0: 10, y0: 20, x1: 400, y1: 40 },
        baseline: { x0: 10, y0: 35, x1: 400, y1: 35 + 0.01 * 390 },
      },
      {
        text: "Heading",
        confidence: 96,
        bbox: { x0: 10, y0: 50, x1: 400, y1: 80 },
        baseline: { x0: 10, y0: 76, x1: 400, y1: 76 },
      },
    ]);
  });

  it("reads a page without text as no lines", () => {
    expect(parseHocr("<div class='ocr_page' title='bbox 0 0 10 10'></div>")).toEqual([]);
    expect(parseHocr("")).toEqual([]);
  });
});
