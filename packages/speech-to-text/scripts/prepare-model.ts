// Run by `pnpm install` (the root postinstall), so that no server start pays for it: fetches the
// Moonshine speech model from PyPI (the moonshine-cpp wheel, pinned and checked by hash) and
// converts it to ONNX into LOCUS_SPEECH_MODEL_DIR (about 10 s and 1 GB of memory, once). A failure
// here is not fatal: recordings are then heard by pocketsphinx, and /readyz says why.
import {
  DEFAULT_PYPI_FILES,
  DEFAULT_SPEECH_MODEL_DIR,
  MOONSHINE_MODEL,
  prepareMoonshineModel,
} from "../src/index.ts";

const say = (message: string) => process.stdout.write(`locus: ${message}\n`);
const dir = process.env.LOCUS_SPEECH_MODEL_DIR || DEFAULT_SPEECH_MODEL_DIR;
try {
  const started = Date.now();
  const outcome = await prepareMoonshineModel(dir, process.env.LOCUS_PYPI_FILES || DEFAULT_PYPI_FILES, say);
  if (outcome === "fetched")
    say(`${MOONSHINE_MODEL.name} ready in ${dir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (err) {
  process.stderr.write(
    `locus: could not prepare ${MOONSHINE_MODEL.name} in ${dir} (${err instanceof Error ? err.message : String(err)}); ` +
      "recordings will be heard by pocketsphinx until `pnpm install` fetches it.\n",
  );
}
