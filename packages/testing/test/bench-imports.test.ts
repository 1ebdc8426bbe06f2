import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * bench/ is in folders by concern (bench/README.md), and no module of it imports one that imports
 * it back, directly or through others: type-only imports count, and so do dynamic ones.
 */
const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "../../../bench");
/** Folders of bench/ that hold no benchmark code: data, written reports, installed packages. */
const NOT_CODE = new Set(["fixtures", "report", "node_modules"]);

/** The relative specifiers a module imports: `import`, `import type`, `export ... from`, `import()`. */
function relativeImports(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    // A statement from the start of a line (a doc comment's lines start with *), across lines.
    /^[ \t]*(?:import|export)\b[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/gm,
    /^[ \t]*import\s*["'](\.{1,2}\/[^"']+)["']/gm,
    /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) found.push(m[1]!);
  return found;
}

function benchModules(dir = BENCH): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return NOT_CODE.has(entry.name) || entry.name.startsWith(".") ? [] : benchModules(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Each module's imports of other modules of bench/ (those outside it, such as services/, left out). */
function importGraph(modules: readonly string[]): Map<string, string[]> {
  return new Map(
    modules.map((file) => [
      file,
      relativeImports(readFileSync(file, "utf8"))
        .map((specifier) => resolve(dirname(file), specifier))
        .filter((target) => !relative(BENCH, target).startsWith("..")),
    ]),
  );
}

/** The cycles a depth-first walk meets, each as the path from a module back to itself. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string) => {
    const at = path.indexOf(node);
    if (at >= 0) {
      cycles.push([...path.slice(at), node]);
      return;
    }
    if (done.has(node)) return;
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    done.add(node);
  };
  for (const node of graph.keys()) visit(node);
  return cycles;
}

const named = (cycle: readonly string[]) => cycle.map((file) => relative(BENCH, file)).join(" -> ");

describe("bench/ imports", () => {
  it("reads every kind of relative import, and nothing else", () => {
    const source = [
      'import { a } from "./a.ts";',
      'import type { B } from "../b/b.ts";',
      "import {",
      "  c,",
      "  type C,",
      '} from "./c.ts";',
      'export { d } from "./d.ts";',
      'export * from "./e.ts";',
      'import "./f.ts";',
      'const g = await import("./g.ts");',
      'import { h } from "@locus/testing";',
      'import { join } from "node:path";',
      ' * import { x } from "./in-a-comment.ts";',
      'const text = "not from ./z.ts";',
    ].join("\n");
    expect(relativeImports(source).sort()).toEqual(
      ["./a.ts", "../b/b.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./g.ts"].sort(),
    );
  });

  it("finds the cycles bench/ once had", () => {
    // ocr.ts ↔ ocr-real-pages.ts, and report.ts → report-markdown.ts → ai-answers-report.ts →
    // report.ts (a type import), as they were before the folders.
    const graph = new Map([
      ["ocr.ts", ["ocr-real-pages.ts", "stats.ts"]],
      ["ocr-real-pages.ts", ["ocr.ts", "stats.ts"]],
      ["report.ts", ["report-markdown.ts"]],
      ["report-markdown.ts", ["ai-answers-report.ts", "stats.ts"]],
      ["ai-answers-report.ts", ["report.ts"]],
      ["stats.ts", []],
    ]);
    expect(findCycles(graph).map((c) => c.join(" -> "))).toEqual([
      "ocr.ts -> ocr-real-pages.ts -> ocr.ts",
      "report.ts -> report-markdown.ts -> ai-answers-report.ts -> report.ts",
    ]);
    expect(
      findCycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("has no cycle, and every relative import names a module that exists", () => {
    const modules = benchModules();
    // The walk reached the code: the entry and the folders' modules.
    expect(modules).toContain(join(BENCH, "run.ts"));
    expect(modules.length).toBeGreaterThan(40);
    const graph = importGraph(modules);
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => !existsSync(t)).map((t) => `${relative(BENCH, file)} -> ${relative(BENCH, t)}`),
    );
    expect(missing).toEqual([]);
    expect(findCycles(graph).map(named)).toEqual([]);
  });
});
