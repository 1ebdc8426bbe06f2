import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTextImage, QUALITY_FIXTURES, seededRandom } from "@locus/testing";
import { openImage } from "../src/index.ts";
import { readStraightened, type RecognisedLine } from "../src/ocr-engine.ts";
import { estimateLean, estimateLineHeight } from "../src/lean.ts";
import { readPgm, type GreyImage } from "../src/pgm.ts";

const DEG = Math.PI / 180;
const LINES = Array.from(
  { length: 20 },
  (_, i) => `Line ${i + 1} of ordinary words about the weather and tea`,
);

/** An image as the extractors hand it over: prepared, grey. */
async function grey(data: Buffer): Promise<GreyImage> {
  const page = await (await openImage(data)).page(1, 1);
  const image = readPgm(page.pgm);
  if (!image) throw new Error("not a PGM");
  return image;
}

describe("the lean of a page's lines, from its pixels (before any reading)", () => {
  it.each([2, -4, 0.5, 0])("finds a generated page turned %s° within 0.1°", async (deg) => {
    const { data } = await makeTextImage({
      lines: LINES,
      rotateDeg: deg,
      noise: 20,
      format: "jpeg",
      quality: 80,
    });
    const lean = estimateLean(await grey(data));
    // Under half a degree is what the fine search can leave at 0 when the gain is too small to trust.
    if (Math.abs(deg) >= 1) expect(Math.abs(lean / DEG - deg)).toBeLessThanOrEqual(0.1);
    else expect(Math.abs(lean / DEG - deg)).toBeLessThanOrEqual(0.5);
  });

  it("finds the real photo-like page turned 1.5°, and the two straight real pages level", async () => {
    const lean = async (name: string) => estimateLean(await grey(readFileSync(join(QUALITY_FIXTURES, name))));
    expect(Math.abs((await lean("libtasn1-page-photo.jpg")) / DEG - 1.5)).toBeLessThanOrEqual(0.15);
    expect(await lean("fontconfig-user-page.png")).toBe(0);
    expect(await lean("flite-page.png")).toBe(0);
  });

  it("says 0 for a blank page and for noise, which have no lines to lean", () => {
    const width = 800;
    const height = 1000;
    expect(estimateLean({ width, height, pixels: new Uint8Array(width * height).fill(250) })).toBe(0);
    const random = seededRandom(7);
    const noise = Uint8Array.from({ length: width * height }, () => Math.floor(random() * 256));
    expect(estimateLean({ width, height, pixels: noise })).toBe(0);
  });
});

describe("the height of a page's lines, from its pixels (before any reading)", () => {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

  it.each([
    ["a screenshot's 11 px text", { fontPx: 11 }],
    ["a 150-dpi page, noise ±20, JPEG q80", { noise: 20, format: "jpeg" as const, quality: 80 }],
    [
      "a photo turned 2°, noise ±30, JPEG q75",
      { rotateDeg: 2, noise: 30, format: "jpeg" as const, quality: 75 },
    ],
  ])("%s: within 2 px of its lines' drawn height", async (_name, spec) => {
    const image = await makeTextImage({ lines: LINES, ...spec });
    const page = await grey(image.data);
    const drawn = median(image.lineBoxes.map((box) => box.height));
    const measured = estimateLineHeight(page, estimateLean(page));
    expect(measured).not.toBeNull();
    expect(Math.abs((measured ?? 0) - drawn)).toBeLessThanOrEqual(2);
  });

  it("on the real page images, what the recogniser's line boxes measure (16, 21 and 21 px) within 1 px", async () => {
    const height = async (name: string) => {
      const page = await grey(readFileSync(join(QUALITY_FIXTURES, name)));
      return estimateLineHeight(page, estimateLean(page)) ?? 0;
    };
    expect(Math.abs((await height("fontconfig-user-page.png")) - 16)).toBeLessThanOrEqual(1);
    expect(Math.abs((await height("libtasn1-page-photo.jpg")) - 21)).toBeLessThanOrEqual(1);
    expect(Math.abs((await height("flite-page.png")) - 21)).toBeLessThanOrEqual(1);
  });

  it("says nothing for a blank page, noise, or too few lines to tell", async () => {
    const width = 800;
    const height = 1000;
    expect(
      estimateLineHeight({ width, height, pixels: new Uint8Array(width * height).fill(250) }, 0),
    ).toBeNull();
    const random = seededRandom(7);
    const noise = Uint8Array.from({ length: width * height }, () => Math.floor(random() * 256));
    expect(estimateLineHeight({ width, height, pixels: noise }, 0)).toBeNull();
    const note = await grey((await makeTextImage({ lines: ["Two lines", "of a note"], width: 600 })).data);
    expect(estimateLineHeight(note, 0)).toBeNull();
  });
});

describe("reading straightened", () => {
  /** A reading whose lines lean by `lean` radians once the image is turned by `rotation`. */
  const line = (lean: number): RecognisedLine => ({
    text: "words",
    confidence: 90,
    bbox: { x0: 0, y0: 0, x1: 400, y1: 20 },
    baseline: { x0: 0, y0: 18, x1: 400, y1: 18 + 400 * Math.tan(lean) },
  });

  it("reads a page once, turned by the lean its pixels show, when that levels its lines", async () => {
    const rotations: number[] = [];
    const page = await readStraightened((rotation) => {
      rotations.push(rotation);
      return Promise.resolve([line(0.03 + rotation)]);
    }, 0.03);
    expect(rotations).toEqual([-0.03]);
    expect(page.rotation).toBe(-0.03);
  });

  it("reads again, turned further, when the lines still lean after the first turn", async () => {
    const rotations: number[] = [];
    const page = await readStraightened((rotation) => {
      rotations.push(rotation);
      // The pixels said 0.03, the lines lean 0.06.
      return Promise.resolve([line(0.06 + rotation)]);
    }, 0.03);
    expect(rotations).toHaveLength(2);
    expect(rotations[1]).toBeCloseTo(-0.06, 10);
    expect(page.rotation).toBeCloseTo(-0.06, 10);
  });

  it("reads a page as it is when the lean its pixels show is one the recogniser copes with", async () => {
    const rotations: number[] = [];
    await readStraightened((rotation) => {
      rotations.push(rotation);
      return Promise.resolve([line(0.005)]);
    }, 0.01);
    expect(rotations).toEqual([0]);
  });
});
