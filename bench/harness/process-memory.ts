// Resident memory of the processes a step starts, sampled from /proc: what a benchmark reports as
// the peak memory of a tool it runs (LibreOffice's oosplash and soffice.bin), whoever starts it.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { round } from "./stats.ts";

const PAGE_SIZE = (() => {
  try {
    return Number(execFileSync("getconf", ["PAGESIZE"], { encoding: "utf8" }).trim()) || 4096;
  } catch {
    return 4096;
  }
})();

/** Every process's parent and resident pages, from /proc/<pid>/stat. */
function processTable(): { children: Map<number, number[]>; rssPages: Map<number, number> } {
  const children = new Map<number, number[]>();
  const rssPages = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // ended between the listing and the read
    }
    // Fields after the command name, which may itself hold spaces and parentheses: state, ppid, ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(name);
    const ppid = Number(fields[1]);
    rssPages.set(pid, Number(fields[21]));
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  return { children, rssPages };
}

/** The processes descending from `root`, with their resident pages. */
export function descendants(root: number): Map<number, number> {
  const { children, rssPages } = processTable();
  const found = new Map<number, number>();
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    found.set(pid, rssPages.get(pid) ?? 0);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/**
 * Runs `fn` while sampling, from /proc, the resident memory of the processes this process starts
 * meanwhile (those already running, such as tsx's esbuild, are left out): the LibreOffice tree
 * (oosplash, soffice.bin) of either side, since the benchmark runs one conversion at a time and
 * starts nothing else meanwhile. Shared pages count in each process. The peak in MB.
 */
export async function withPeakRss<T>(
  sampleMs: number,
  fn: () => Promise<T>,
): Promise<{ value: T; peakMb: number }> {
  const before = new Set(descendants(process.pid).keys());
  let peakPages = 0;
  const sample = () => {
    let pages = 0;
    for (const [pid, rss] of descendants(process.pid)) if (!before.has(pid)) pages += rss;
    peakPages = Math.max(peakPages, pages);
  };
  const timer = setInterval(sample, sampleMs);
  try {
    const value = await fn();
    return { value, peakMb: round((peakPages * PAGE_SIZE) / 1024 ** 2) };
  } finally {
    clearInterval(timer);
  }
}
