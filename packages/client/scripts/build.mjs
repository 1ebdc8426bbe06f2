/**
 * Builds the package as it is published (`pnpm pack`, `pnpm publish`): ES modules with type
 * declarations in dist/, from src/ by the TypeScript compiler. In the workspace the package is
 * used from its sources; publishConfig points the published one at dist/.
 *
 * tsc rewrites the sources' relative `.ts` imports to `.js` in the JavaScript it emits
 * (rewriteRelativeImportExtensions) but not in the declarations, so they are rewritten here: a
 * consumer's TypeScript must not be asked to import `.ts` files.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = fileURLToPath(new URL("../dist/", import.meta.url));
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
for (const name of readdirSync(dist).filter((f) => f.endsWith(".d.ts"))) {
  const path = `${dist}${name}`;
  const text = readFileSync(path, "utf8");
  writeFileSync(path, text.replace(/(from\s+["']\.{1,2}\/[^"']+)\.ts(["'])/g, "$1.js$2"));
}
