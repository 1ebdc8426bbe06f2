// Reading a Prometheus scrape in tests: each sample with its labels, and sums over label subsets.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of Prometheus's text format (comments and blank lines skipped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key = "", value = ""] of (m[2] ?? "").matchAll(LABEL)) {
      labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: m[1] ?? "", labels, value: Number(m[3]) });
  }
  return samples;
}

/** GETs a /metrics URL and parses it; fails on anything but a 200 in the text format. */
export async function scrapeMetrics(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get("content-type") ?? "")) {
    throw new Error(`${url} is not Prometheus's text format: ${res.headers.get("content-type")}`);
  }
  return parseMetrics(text);
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none do). */
export function metricValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
