import { readFileSync } from "node:fs";
import { SETTINGS, type Setting } from "../src/config.ts";

/**
 * The README's configuration table is written for people (settings that go together share a row,
 * meanings run long), so it is checked against the schema rather than generated from it: every
 * setting has a row, every row names settings, and each default reads as the schema's.
 */
const README = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

interface Row {
  variables: string[];
  defaults: string[];
  line: string;
}

/**
 * The rows of the first table under "## Configuration". A row's variables are its backticked
 * names; `_PRO` after `LOCUS_RATE_LIMIT_FREE` is short for `LOCUS_RATE_LIMIT_PRO`. With several
 * variables, the default cell holds one default for all, or one per variable, separated by ", "
 * or " / " like the names.
 */
function configurationTable(readme: string): Row[] {
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? "";
  const lines = section.split("\n");
  const start = lines.findIndex((l) => l.startsWith("|"));
  const table = lines.slice(
    start,
    lines.findIndex((l, i) => i > start && !l.startsWith("|")),
  );
  // The header and the separator line.
  return table.slice(2).map((line) => {
    const [names = "", defaults = ""] = line
      .split("|")
      .slice(1)
      .map((cell) => cell.trim());
    let full = "";
    const variables = [...names.matchAll(/`(_?[A-Z][A-Z0-9_]*)`/g)].map(([, name = ""]) => {
      if (!name.startsWith("_")) return (full = name);
      return full.slice(0, full.lastIndexOf("_")) + name;
    });
    return { variables, defaults: variables.length > 1 ? defaults.split(/\s+\/\s+|,\s+/) : [defaults], line };
  });
}

/** How the table states a setting's default, and the split shape's where it has its own. */
function documentedDefault(s: Setting): string {
  if (s.unset !== undefined) return s.unset;
  if (s.default === undefined) return "none";
  const stated = s.default === "" ? "empty" : `\`${s.default}\``;
  return s.splitDefault === undefined ? stated : `${stated} (split: \`${s.splitDefault}\`)`;
}

const rows = configurationTable(README);
const tabled = rows.flatMap((r) => r.variables);

describe("the README's configuration table", () => {
  it("is found", () => {
    expect(rows.length).toBeGreaterThan(10);
  });

  it("has a row for every setting, and one only", () => {
    const missing = SETTINGS.map((s) => s.env).filter((env) => !tabled.includes(env));
    expect(missing).toEqual([]);
    expect(tabled.filter((env, i) => tabled.indexOf(env) !== i)).toEqual([]);
  });

  it("names no variable that is not a setting", () => {
    const settings = new Set(SETTINGS.map((s) => s.env));
    expect(tabled.filter((env) => !settings.has(env))).toEqual([]);
  });

  it("states each setting's default as the schema does", () => {
    const mismatches: string[] = [];
    for (const row of rows) {
      if (row.defaults.length !== 1 && row.defaults.length !== row.variables.length) {
        mismatches.push(
          `${row.variables.join(", ")}: ${row.defaults.length} defaults for ${row.variables.length}`,
        );
        continue;
      }
      row.variables.forEach((env, i) => {
        const setting = SETTINGS.find((s) => s.env === env);
        if (!setting) return;
        const stated = row.defaults.length === 1 ? row.defaults[0] : row.defaults[i];
        const declared = documentedDefault(setting);
        if (stated !== declared) mismatches.push(`${env}: the README says ${stated}, the schema ${declared}`);
      });
    }
    expect(mismatches).toEqual([]);
  });
});

describe("the settings", () => {
  it("read each variable once", () => {
    const names = SETTINGS.map((s) => s.env);
    expect(names.filter((env, i) => names.indexOf(env) !== i)).toEqual([]);
  });
});
