// The markdown table and number cells the bench report's renderers share.
export const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((h, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
export const fmt = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "–" : String(v));
export const round2 = (v: number) => Math.round(v * 100) / 100;
