import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { languageModelPath, OcrSetupError, type InstalledLanguages } from "../src/index.ts";
import { languageModels, modelFolder } from "../src/languages.ts";

describe("which model each OCR language is read with (LOCUS_OCR_MODELS)", () => {
  let dir: string;
  let installed: InstalledLanguages;
  beforeAll(() => {
    // A tesseract installation of its own: English only, as Debian's tesseract-ocr-eng gives it.
    dir = mkdtempSync(join(tmpdir(), "locus-tessdata-test-"));
    writeFileSync(join(dir, "eng.traineddata"), "the command's own English model");
    installed = { folder: dir, codes: new Set(["eng", "osd"]) };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("auto: the command's own model for each language it has, the npm package's for the rest", () => {
    expect(languageModels(["eng", "deu"], "auto", installed)).toEqual([
      { code: "eng", path: join(dir, "eng.traineddata"), gzipped: false, origin: "system" },
      { code: "deu", path: languageModelPath("deu"), gzipped: true, origin: "packaged" },
    ]);
    // No tesseract command: every model from its package.
    expect(languageModels(["eng"], "auto", null).map((m) => m.origin)).toEqual(["packaged"]);
  });

  it("packaged: the npm packages' models, whatever the command has", () => {
    expect(languageModels(["eng"], "packaged", installed)).toEqual([
      { code: "eng", path: languageModelPath("eng"), gzipped: true, origin: "packaged" },
    ]);
  });

  it("system: stops the start, saying what to install, for a language the command has no model of", () => {
    expect(languageModels(["eng"], "system", installed)[0]?.origin).toBe("system");
    const german = () => languageModels(["eng", "deu"], "system", installed);
    expect(german).toThrow(OcrSetupError);
    expect(german).toThrow(
      `OCR language "deu" is not installed for the tesseract command (in ${dir}): install it ` +
        "(Debian: apt-get install tesseract-ocr-deu), or set LOCUS_OCR_MODELS=auto to read it with the npm package's model.",
    );
    expect(() => languageModels(["eng"], "system", null)).toThrow("no tesseract command lists any");
    expect(() => languageModels([], "auto", installed)).toThrow("No OCR language is configured.");
  });

  it("gives the recognisers one folder: where the models already lie together, else a private one", async () => {
    // The command's own models: their folder, nothing copied.
    const own = await modelFolder(languageModels(["eng"], "system", installed), false);
    expect(own).toMatchObject({ path: dir, gzipped: false });
    await own.remove();
    expect(existsSync(join(dir, "eng.traineddata"))).toBe(true);

    // One package's model, for tesseract.js (which unpacks it itself): the package's folder.
    const packaged = languageModels(["eng"], "packaged", null);
    const gz = await modelFolder(packaged, true);
    expect(gz).toMatchObject({ path: dirname(languageModelPath("eng")), gzipped: true });
    await gz.remove();
    expect(existsSync(languageModelPath("eng"))).toBe(true);

    // For the command, which reads them unpacked: a private folder, removed when given back.
    const unpacked = await modelFolder(packaged, false);
    expect(unpacked.gzipped).toBe(false);
    // Compared with equals(): a deep comparison of megabytes takes jest seconds.
    expect(
      readFileSync(join(unpacked.path, "eng.traineddata")).equals(
        gunzipSync(readFileSync(languageModelPath("eng"))),
      ),
    ).toBe(true);
    await unpacked.remove();
    expect(existsSync(unpacked.path)).toBe(false);

    // Mixed: the command's linked, the package's unpacked, side by side.
    const mixed = await modelFolder(languageModels(["eng", "deu"], "auto", installed), true);
    expect(mixed.gzipped).toBe(false);
    expect(lstatSync(join(mixed.path, "eng.traineddata")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(mixed.path, "eng.traineddata"))).toBe(join(dir, "eng.traineddata"));
    expect(
      readFileSync(join(mixed.path, "deu.traineddata")).equals(
        gunzipSync(readFileSync(languageModelPath("deu"))),
      ),
    ).toBe(true);
    await mixed.remove();
    expect(existsSync(mixed.path)).toBe(false);
    expect(existsSync(join(dir, "eng.traineddata"))).toBe(true);
  });
});
