// `pnpm build`: Locus as JavaScript, for production (the image, `pnpm start:split`). esbuild bundles
// each entry point of apps/locus with the workspace's TypeScript sources (@locus/*) into
// apps/locus/dist/*.js, which plain `node` runs: no tsx loader, whose transpiling of every source
// at start cost 100 MB and more of idle memory and seconds of start per process
// (bench/memory/README.md has the figures).
//
// What stays as it was, so that every file a module finds at run time is found as before:
// - Third-party packages are not bundled (native modules, pdf.js and tesseract.js workers,
//   onnxruntime, sharp find their own files from where they are). Each import of one is resolved
//   here, from the importing source's own folder as Node would (pnpm gives each workspace package
//   its own node_modules), and written into the bundle as a path relative to dist/.
// - In the workspace packages (packages/*, services/*), `import.meta.url` is the URL of the
//   module's source file, not the bundle's: the models directory (packages/embedder/models), the
//   dashboard's public/ folder and every createRequire(import.meta.url) resolve from where they
//   did. The sources therefore stay beside the bundle (the image keeps the whole tree).
//   apps/locus's own modules keep the bundle's URL: split.ts starts main.js from beside itself.
// - The PDF worker thread (piscina loads it by file name) is its own bundle, dist/extraction-worker.js;
//   LOCUS_PDF_WORKER_BUNDLE tells the pool where it is (packages/pdf-extraction/src/extraction-pool.ts).
// It takes about a second, so `pnpm start:split` builds every time rather than checking freshness.
import { readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const OUT_DIR = join(ROOT, "apps/locus/dist");
const ENTRY_POINTS = {
  main: "apps/locus/src/main.ts",
  cli: "apps/locus/src/cli.ts",
  split: "apps/locus/src/split.ts",
  "extraction-worker": "packages/pdf-extraction/src/extraction-worker.ts",
};
const POOL_SOURCE = join(ROOT, "packages/pdf-extraction/src/extraction-pool.ts");
/** Folders whose modules keep their source's import.meta.url (see above). */
const WORKSPACE_PACKAGES = [join(ROOT, "packages") + sep, join(ROOT, "services") + sep];

/** Slash-separated, starting with ./ or ../: a specifier Node reads as relative. */
function relativeSpecifier(from, to) {
  const path = relative(from, to).split(sep).join("/");
  return path.startsWith(".") ? path : `./${path}`;
}

/** @returns {import("esbuild").Plugin} */
const keepFilePaths = (outDir) => ({
  name: "locus-keep-file-paths",
  setup(esbuild) {
    // A bare specifier (not @locus/*, not node:) is a third-party package: resolved where the
    // importing source is, left out of the bundle, imported by its path.
    esbuild.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === "resolving" || /^(node:|@locus\/)/.test(args.path)) return undefined;
      const found = await esbuild.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "resolving",
      });
      if (found.errors.length > 0) return { errors: found.errors };
      if (found.external) return { path: args.path, external: true };
      return { path: relativeSpecifier(outDir, found.path), external: true };
    });
    esbuild.onLoad({ filter: /\.ts$/ }, async (args) => {
      let contents = await readFile(args.path, "utf8");
      if (WORKSPACE_PACKAGES.some((dir) => args.path.startsWith(dir))) {
        const source = JSON.stringify(relativeSpecifier(outDir, args.path));
        contents = contents.replace(/\bimport\.meta\.url\b/g, `new URL(${source}, import.meta.url).href`);
      }
      return { contents, loader: "ts" };
    });
  },
});

/** Builds the bundle into outDir (tests build into a folder of their own). */
export async function buildLocus(outDir = OUT_DIR) {
  await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRY_POINTS,
    outdir: outDir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Stack traces point at the TypeScript sources (node --enable-source-maps, which the image sets).
    sourcemap: "linked",
    // Packages are resolved as Node resolves them ("node", "import"/"require", "default"; a
    // package.json's "main"), not with the bundlers' "module" condition and field, whose files Node
    // would not load (@opentelemetry/api's ESM build has extensionless imports).
    conditions: [],
    mainFields: ["main"],
    define: {
      LOCUS_PDF_WORKER_BUNDLE: JSON.stringify(
        relativeSpecifier(dirname(POOL_SOURCE), join(outDir, "extraction-worker.js")),
      ),
    },
    plugins: [keepFilePaths(outDir)],
    logLevel: "warning",
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const started = performance.now();
  const outDir = process.argv[2] ? resolve(process.argv[2]) : OUT_DIR;
  await buildLocus(outDir);
  process.stdout.write(`built ${outDir} in ${Math.round(performance.now() - started)} ms\n`);
}
