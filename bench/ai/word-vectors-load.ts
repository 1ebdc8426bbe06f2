// Run by the ai benchmark in a fresh process: how long loading the word vectors takes and how much
// memory the process holds after it (against what it held before). Prints one JSON line.
import { LocalEmbedder, loadWordVectors } from "@locus/embedder";

const baselineRssMb = process.memoryUsage().rss / 1024 ** 2;
const started = performance.now();
const vectors = await loadWordVectors();
const embedder = new LocalEmbedder(vectors);
const loadMs = performance.now() - started;
// One embedding, so the figure includes what a working process touches.
embedder.embedOne("The refund will be paid within five business days.");
const rssMb = process.memoryUsage().rss / 1024 ** 2;
process.stdout.write(`${JSON.stringify({ loadMs, rssMb, baselineRssMb, words: vectors.size })}\n`);
