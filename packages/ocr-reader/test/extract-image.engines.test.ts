import { makeDecompressionBomb, makeMultiPageTiff, makeTextImage, type TextImage } from "@locus/testing";
import {
  createOcrEngine,
  extractImage,
  ImageReadError,
  languageModelPath,
  OcrSetupError,
  OcrTimeoutError,
  type OcrEngine,
} from "../src/index.ts";
import type { ExtractedPassage } from "@locus/contracts";
import { ENGINES } from "./engines.ts";

const LINES = [
  "Invoices are due within thirty days",
  "",
  "Payment by bank transfer only",
  "Contact the accounts office today",
];

async function read(
  engine: OcrEngine,
  data: Buffer,
): Promise<{ passages: ExtractedPassage[]; pageCount: number }> {
  const passages: ExtractedPassage[] = [];
  const extraction = extractImage(data, engine);
  for (;;) {
    const next = await extraction.next();
    if (next.done) return { passages, pageCount: next.value };
    passages.push(next.value);
  }
}

const words = (text: string) => text.toLowerCase().split(/\s+/).filter(Boolean);

/** The share of the expected words the recogniser got, in order-insensitive bag terms. */
function wordRecall(expected: string[], got: string): number {
  const have = words(got);
  const want = expected.flatMap(words);
  return want.filter((w) => have.includes(w)).length / want.length;
}

/** Where a point of the upright drawing lands after sharp turns the image `deg` clockwise. */
function turned(image: TextImage, deg: number, x: number, y: number): [number, number] {
  const r = (deg * Math.PI) / 180;
  const { width: w, height: h } = image;
  const w2 = w * Math.abs(Math.cos(r)) + h * Math.abs(Math.sin(r));
  const h2 = w * Math.abs(Math.sin(r)) + h * Math.abs(Math.cos(r));
  const dx = x - w / 2;
  const dy = y - h / 2;
  return [w2 / 2 + dx * Math.cos(r) - dy * Math.sin(r), h2 / 2 + dx * Math.sin(r) + dy * Math.cos(r)];
}

for (const { kind, name, describe: suite } of ENGINES) {
  suite(name, () => {
    let engine: OcrEngine;
    beforeAll(() => {
      engine = createOcrEngine({ languages: ["eng"], workers: 2, engine: kind });
    });
    afterAll(() => engine.close());

    describe("extractImage (real Tesseract, language data from @tesseract.js-data/eng)", () => {
      it("reads a clean PNG line by line, with line numbers, boxes and confidence", async () => {
        const image = await makeTextImage({ lines: LINES });
        const { passages, pageCount } = await read(engine, image.data);
        expect(pageCount).toBe(1);
        expect(passages).toHaveLength(1);
        const [passage] = passages;
        expect(passage?.content).toBe(LINES.filter(Boolean).join("\n"));
        expect(passage?.locator).toMatchObject({ page: 1, line: 1, line_end: 3, source: "ocr" });
        expect(passage?.locator.confidence).toBeGreaterThan(0.85);
        // Each line's box is where it was drawn, within a few pixels.
        passage?.locator.line_boxes?.forEach((box, i) => {
          const drawn = image.lineBoxes[i];
          expect(Math.abs(box.x - (drawn?.x ?? 0))).toBeLessThanOrEqual(4);
          expect(Math.abs(box.y - (drawn?.y ?? 0))).toBeLessThanOrEqual(4);
          expect(Math.abs(box.width - (drawn?.width ?? 0))).toBeLessThanOrEqual(8);
        });
      });

      it.each([3, -4, 7])(
        "reads a noisy JPEG turned %d degrees, and boxes the lines where they sit in it",
        async (deg) => {
          const image = await makeTextImage({
            lines: LINES,
            rotateDeg: deg,
            noise: 40,
            format: "jpeg",
            quality: 70,
          });
          const { passages } = await read(engine, image.data);
          const text = passages.map((p) => p.content).join("\n");
          expect(wordRecall(LINES, text)).toBeGreaterThanOrEqual(0.9);
          const boxes = passages[0]?.locator.line_boxes ?? [];
          expect(boxes).toHaveLength(3);
          boxes.forEach((box, i) => {
            const drawn = image.lineBoxes[i];
            if (!drawn) throw new Error("no such line");
            const [cx, cy] = turned(image, deg, drawn.x + drawn.width / 2, drawn.y + drawn.height / 2);
            expect(cx).toBeGreaterThanOrEqual(box.x);
            expect(cx).toBeLessThanOrEqual(box.x + box.width);
            expect(cy).toBeGreaterThanOrEqual(box.y);
            expect(cy).toBeLessThanOrEqual(box.y + box.height);
          });
        },
      );

      it.each(["webp", "gif", "bmp", "tiff"] as const)("reads %s", async (format) => {
        const { passages } = await read(engine, (await makeTextImage({ lines: LINES, format })).data);
        expect(wordRecall(LINES, passages.map((p) => p.content).join("\n"))).toBeGreaterThanOrEqual(0.95);
      });

      it("reads every page of a TIFF, each with its page number", async () => {
        const tiff = await makeMultiPageTiff([
          ["The first page speaks of apples"],
          ["The second page speaks of pears"],
        ]);
        const { passages, pageCount } = await read(engine, tiff);
        expect(pageCount).toBe(2);
        expect(passages.map((p) => [p.locator.page, p.content])).toEqual([
          [1, "The first page speaks of apples"],
          [2, "The second page speaks of pears"],
        ]);
      });

      it("applies the EXIF orientation: a phone photo stored sideways reads upright, boxes in displayed pixels", async () => {
        const image = await makeTextImage({ lines: LINES, exifOrientation: 6, format: "jpeg", quality: 90 });
        const { passages } = await read(engine, image.data);
        expect(passages[0]?.content).toBe(LINES.filter(Boolean).join("\n"));
        const first = passages[0]?.locator.line_boxes?.[0];
        expect(Math.abs((first?.y ?? 0) - (image.lineBoxes[0]?.y ?? 0))).toBeLessThanOrEqual(4);
      });

      it("scales small text up before reading it", async () => {
        // A screenshot's 11 px text: too small for the recogniser as it is.
        const lines = ["Settings saved for the billing account", "Your next invoice arrives on Monday"];
        const image = await makeTextImage({ lines, fontPx: 11, width: 420 });
        const { passages } = await read(engine, image.data);
        expect(wordRecall(lines, passages.map((p) => p.content).join("\n"))).toBeGreaterThanOrEqual(0.9);
        // Boxes are still in the screenshot's own pixels.
        const box = passages[0]?.locator.line_boxes?.[0];
        expect(Math.abs((box?.y ?? 0) - (image.lineBoxes[0]?.y ?? 0))).toBeLessThanOrEqual(3);
      });

      it("finds nothing, rather than junk, in an image of noise", async () => {
        const image = await makeTextImage({ lines: [], width: 600, height: 400, noise: 120 });
        const { passages } = await read(engine, image.data);
        expect(passages).toEqual([]);
      });

      describe("refuses what it cannot read, with a reason", () => {
        const failure = async (data: Buffer) => {
          try {
            await read(engine, data);
          } catch (err) {
            return err as ImageReadError;
          }
          throw new Error("the image was read");
        };

        it("a decompression bomb, before decoding a pixel", async () => {
          const started = process.memoryUsage().rss;
          const err = await failure(makeDecompressionBomb());
          expect(err).toBeInstanceOf(ImageReadError);
          expect(err.code).toBe("image_too_large");
          expect(err.message).toBe(
            "The image is 20000 × 20000 pixels (400 megapixels); Locus reads images up to 100 megapixels.",
          );
          expect(process.memoryUsage().rss - started).toBeLessThan(100 * 1024 * 1024);
        });

        it("a truncated JPEG", async () => {
          const { data } = await makeTextImage({ lines: LINES, format: "jpeg" });
          const err = await failure(data.subarray(0, Math.floor(data.length / 2)));
          expect(err.code).toBe("image_corrupt");
          expect(err.message).toBe("The image is damaged or truncated and cannot be read.");
        });

        it("a PNG that is a signature and nothing else", async () => {
          const err = await failure(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
          expect(err.code).toBe("image_corrupt");
        });

        it("a zero-byte file", async () => {
          expect((await failure(Buffer.alloc(0))).code).toBe("image_corrupt");
        });

        it("an SVG (an image format Locus does not read)", async () => {
          const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>');
          const err = await failure(svg);
          expect(err.code).toBe("image_unsupported");
        });
      });
    });

    describe("the OCR engine", () => {
      it("names the missing package when a language is not installed", () => {
        expect(() => createOcrEngine({ languages: ["eng", "fra"], engine: kind })).toThrow(OcrSetupError);
        expect(() => languageModelPath("fra")).toThrow(
          'OCR language "fra" is not installed: add the npm package @tesseract.js-data/fra (pnpm add -w @tesseract.js-data/fra) or remove "fra" from LOCUS_OCR_LANGUAGES.',
        );
        expect(() => languageModelPath("../etc")).toThrow("is not a Tesseract language code");
      });

      it("reads with several languages, each from its own package (German from @tesseract.js-data/deu)", async () => {
        const german = createOcrEngine({ languages: ["eng", "deu"], workers: 1, engine: kind });
        try {
          const lines = ["Die Größe der Straße überrascht", "Prüfung der Gebäude im März"];
          const { data } = await makeTextImage({ lines });
          const page = await german.recognize(data);
          expect(page.lines.map((l) => l.text)).toEqual(lines);
        } finally {
          await german.close();
        }
      });

      it("tells its observer how long each image took its recogniser, by engine and outcome", async () => {
        const seen: { engine: string; outcome: string; seconds: number }[] = [];
        const observed = createOcrEngine({
          languages: ["eng"],
          workers: 1,
          engine: kind,
          observer: {
            imageRecognised: (engine, outcome, seconds) => seen.push({ engine, outcome, seconds }),
          },
        });
        try {
          const { data } = await makeTextImage({ lines: LINES });
          await observed.recognize(data);
          await expect(observed.recognize(Buffer.from("not an image"))).rejects.toThrow();
        } finally {
          await observed.close();
        }
        expect(seen.map(({ engine, outcome }) => ({ engine, outcome }))).toEqual([
          { engine: kind, outcome: "ok" },
          { engine: kind, outcome: "error" },
        ]);
        expect(seen[0]?.seconds).toBeGreaterThan(0);
        expect(seen[0]?.seconds).toBeLessThan(60);
      });

      it("gives up on an image that takes too long, ends that recogniser, and keeps serving", async () => {
        const outcomes: string[] = [];
        const impatient = createOcrEngine({
          languages: ["eng"],
          workers: 1,
          timeoutMs: 1,
          engine: kind,
          observer: { imageRecognised: (_engine, outcome) => outcomes.push(outcome) },
        });
        const { data } = await makeTextImage({ lines: LINES });
        try {
          await expect(impatient.recognize(data)).rejects.toBeInstanceOf(OcrTimeoutError);
          await expect(impatient.recognize(data)).rejects.toBeInstanceOf(OcrTimeoutError);
        } finally {
          await impatient.close();
        }
        // Each time out is an image its recogniser failed on.
        expect(outcomes).toEqual(["error", "error"]);
        // The shared engine was not touched.
        expect((await engine.recognize(data)).lines.length).toBe(3);
      });

      it("reads images given at once with its workers, in any order, each answer to its own image", async () => {
        const images = await Promise.all(
          ["alpha bravo", "charlie delta", "echo foxtrot", "golf hotel"].map((t) =>
            makeTextImage({ lines: [t] }),
          ),
        );
        const pages = await Promise.all(images.map((i) => engine.recognize(i.data)));
        expect(pages.map((p) => p.lines[0]?.text)).toEqual([
          "alpha bravo",
          "charlie delta",
          "echo foxtrot",
          "golf hotel",
        ]);
      });

      it("rejects what is not an image with a clear error, and keeps serving", async () => {
        await expect(engine.recognize(Buffer.from("/etc/passwd\n"))).rejects.toThrow(
          /cannot read this image|attempting to read image/,
        );
        const signatureOnly = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
        await expect(engine.recognize(signatureOnly)).rejects.toThrow(
          /cannot read this image|attempting to read image/,
        );
        const { data } = await makeTextImage({ lines: ["still reading images"] });
        expect((await engine.recognize(data)).lines.map((l) => l.text)).toEqual(["still reading images"]);
      });
    });
  });
}
