import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The README's layout (the block under "### Layout") against the workspace: every workspace
 * package (pnpm-workspace.yaml) has a line saying what it is, and every line names a folder that
 * exists. Without it the layout fell behind twice (a service and four packages were missing).
 */
const ROOT = new URL("../../../", import.meta.url).pathname;
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The folders pnpm-workspace.yaml names: `apps/*` read as every folder of apps/ with a package.json. */
function workspaceFolders(): string[] {
  const globs = [
    ...readFileSync(join(ROOT, "pnpm-workspace.yaml"), "utf8").matchAll(/^\s*-\s*"([^"]+)"/gm),
  ].map((m) => m[1] ?? "");
  return globs.flatMap((glob) =>
    glob.endsWith("/*")
      ? readdirSync(join(ROOT, glob.slice(0, -2)), { withFileTypes: true })
          .filter((d) => d.isDirectory() && existsSync(join(ROOT, glob.slice(0, -2), d.name, "package.json")))
          .map((d) => `${glob.slice(0, -2)}/${d.name}/`)
      : [`${glob}/`],
  );
}

/** The folders the layout block describes: the first word of each line that starts one. */
function layoutFolders(): string[] {
  const block = README.split(/^### Layout$/m)[1]?.split(/^```$/m)[1] ?? "";
  return [...block.matchAll(/^(\S+\/)\s/gm)].map((m) => m[1] ?? "");
}

describe("README's layout", () => {
  it("is found, with folders in it", () => {
    expect(layoutFolders().length).toBeGreaterThan(10);
  });

  it("names every workspace package", () => {
    const described = new Set(layoutFolders());
    expect(workspaceFolders().filter((folder) => !described.has(folder))).toEqual([]);
  });

  it("names only folders that exist", () => {
    expect(layoutFolders().filter((folder) => !existsSync(join(ROOT, folder)))).toEqual([]);
  });
});
