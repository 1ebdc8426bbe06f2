import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  checkPinnedFile,
  hasPinnedFiles,
  readPinnedFile,
  sha256,
  takePinnedFiles,
  writeWhole,
} from "@locus/model-files";
import { ortToOnnx } from "./ort-to-onnx.ts";

/**
 * Moonshine base (English), by Moonshine AI (formerly Useful Sensors): an encoder-decoder speech
 * recogniser of 61 M parameters trained for transcription of speech of any length up to about
 * 30 s. MIT licence (the English models; see MODEL-NOTICE.md).
 *
 * Where Locus gets it: PyPI's `moonshine-cpp` 0.1.4, by the model's authors, carries it in ONNX
 * Runtime's ".ort" form with its tokenizer (the package's own code and native libraries are not
 * used). `pnpm install` downloads the wheel, checks its hash and each file's, and converts the two
 * ".ort" files to ONNX (ort-to-onnx.ts says why), checking the results against their pinned hashes
 * too: the conversion is deterministic, so the same wheel always gives the same files.
 */
export const MOONSHINE_MODEL = {
  name: "moonshine-base-en",
  licence: "MIT",
  /** PyPI's file host, unless LOCUS_PYPI_FILES names a mirror (same layout). */
  source: {
    path: "packages/8f/97/c4093d9b122310ed6a5a21e86852b0818f7b4efe63cf3c01993dba56df46/moonshine_cpp-0.1.4-py3-none-manylinux2014_x86_64.whl",
    sha256: "f7afc662bdd3ef98815ee3b940438b456e77d5a77cea5396ed9c572785412ebd",
  },
  /** The files in the wheel, and the ONNX model each ".ort" one becomes. */
  files: {
    encoder: {
      entry: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/encoder_model.ort",
      sha256: "9d1a19e044cbf89a207723d1adb667de89a5671a1e3e611b8ebe721b2c31219c",
      name: "moonshine-base-en-encoder.onnx",
      convertedSha256: "4b491b8812f7a24d37b415282f33afc3faedd5e5458ec220aa74a5c1d4032b5c",
    },
    decoder: {
      entry: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/decoder_model_merged.ort",
      sha256: "370e0c1f161d68dc1c2264c1a82024fb123380da3b73f47f05531d1e8d3308c3",
      name: "moonshine-base-en-decoder.onnx",
      convertedSha256: "f60b35a37fbdb34028779eafb570fade3e62f79c43d7441b98dca17ed8acff4b",
    },
    tokenizer: {
      entry: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/tokenizer.bin",
      sha256: "04670d78994d030185c3dd843c60591788fed0a56cc6750747bd326825f13ca9",
      name: "moonshine-base-en-tokenizer.bin",
    },
  },
} as const;

export const DEFAULT_PYPI_FILES = "https://files.pythonhosted.org";

/** Where the speech model lives unless LOCUS_SPEECH_MODEL_DIR says otherwise: beside this package. */
export const DEFAULT_SPEECH_MODEL_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "models");

/** The files as a process reads them: the converted models and the tokenizer, each with its hash. */
const { encoder, decoder, tokenizer } = MOONSHINE_MODEL.files;
export const MOONSHINE_FILES = {
  encoder: { name: encoder.name, sha256: encoder.convertedSha256 },
  decoder: { name: decoder.name, sha256: decoder.convertedSha256 },
  tokenizer: { name: tokenizer.name, sha256: tokenizer.sha256 },
} as const;

/** Whether `pnpm install` put the model's files in `dir` (not their hashes: a load checks those). */
export function moonshineInstalled(dir = DEFAULT_SPEECH_MODEL_DIR): boolean {
  return Object.values(MOONSHINE_FILES).every((file) => existsSync(join(dir, file.name)));
}

export interface MoonshineFiles {
  /** The models' paths: ONNX Runtime reads them itself (no second copy in this process). */
  encoder: string;
  decoder: string;
  tokenizer: Buffer;
}

/** The model's files in `dir`, each checked against its pinned hash (ModelUnavailableError if not). */
export async function readMoonshineModel(dir = DEFAULT_SPEECH_MODEL_DIR): Promise<MoonshineFiles> {
  return {
    encoder: await checkPinnedFile(dir, MOONSHINE_FILES.encoder, MOONSHINE_MODEL.name),
    decoder: await checkPinnedFile(dir, MOONSHINE_FILES.decoder, MOONSHINE_MODEL.name),
    tokenizer: await readPinnedFile(dir, MOONSHINE_FILES.tokenizer, MOONSHINE_MODEL.name),
  };
}

/**
 * Puts the model's files into `dir` unless they are there as pinned: downloads the wheel, takes
 * the three files out (each checked), converts the two models and checks what the conversion made.
 */
export async function prepareMoonshineModel(
  dir = DEFAULT_SPEECH_MODEL_DIR,
  pypiFiles = DEFAULT_PYPI_FILES,
  log: (message: string) => void = () => undefined,
): Promise<"present" | "fetched"> {
  if (await hasPinnedFiles(dir, Object.values(MOONSHINE_FILES), MOONSHINE_MODEL.name)) return "present";
  const url = `${pypiFiles.replace(/\/+$/, "")}/${MOONSHINE_MODEL.source.path}`;
  log(`fetching the ${MOONSHINE_MODEL.name} speech model from ${url}`);
  // Known by their place in the wheel until written under their own names.
  const taken = await takePinnedFiles(
    { url, sha256: MOONSHINE_MODEL.source.sha256 },
    Object.values(MOONSHINE_MODEL.files).map(({ entry, sha256 }) => ({ entry, sha256, name: entry })),
  );
  const content = (file: { entry: string }): Buffer => {
    const data = taken.get(file.entry);
    if (!data) throw new Error(`${file.entry} was not taken from the wheel`);
    return data;
  };
  for (const model of [encoder, decoder]) {
    const onnx = ortToOnnx(content(model));
    if (sha256(onnx) !== model.convertedSha256)
      throw new Error(
        `converting ${model.entry} gave a file other than the pinned one (sha256 ${sha256(onnx)}); ` +
          "the converter changed without its pinned hashes",
      );
    await writeWhole(join(dir, model.name), onnx);
  }
  await writeWhole(join(dir, tokenizer.name), content(tokenizer));
  return "fetched";
}
