// Kubernetes memory: each Locus Deployment requests at least what its target was measured to hold
// idle, and its limit is above its request.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import { at, list, show, quantity } from "./yaml.ts";

/**
 * The measurement the requests are held to: `pnpm bench:memory` (bench/memory/idle-memory.ts)
 * writes it, each target started alone from the built bundle (what the image runs), idle after
 * /readyz. Its bundle figures are the floor of a request: a pod scheduled below what it holds idle
 * gets a node that cannot hold it once its neighbours grow, and is the first evicted.
 */
const MEASUREMENT = "bench/memory/idle-memory.json";
const IDLE_MEMORY_FILE = join(dirname(fileURLToPath(import.meta.url)), "../..", MEASUREMENT);

interface IdleMemory {
  targets: Record<string, { bundle: { maxIdleRssMiB: number } }>;
}

/** What a container must run for the bundle's figures to be its figures. */
const BUNDLE_MAIN = "apps/locus/dist/main.js";

export function checkMemory(
  rendering: Rendering,
  workloads: Workload[],
  idle: IdleMemory = readIdle(),
): void {
  const { problems, where } = rendering;
  for (const w of workloads) {
    if (!w.target) continue;
    const container = list(at(w.podSpec, "containers"))[0];
    const command = list(at(container, "command")).map(show);
    if (!command.includes(BUNDLE_MAIN)) {
      problems.push(
        `${where(w.doc)}: runs ${command.join(" ")}; its memory is sized from ${MEASUREMENT}, which measured node ${BUNDLE_MAIN}`,
      );
    }
    const measured = idle.targets[w.target]?.bundle.maxIdleRssMiB;
    if (measured === undefined) {
      problems.push(
        `${where(w.doc)}: ${MEASUREMENT} has no idle figure for ${w.target} (run pnpm bench:memory)`,
      );
      continue;
    }
    const request = quantity(at(container, "resources", "requests", "memory"));
    const limit = quantity(at(container, "resources", "limits", "memory"));
    if (request === undefined || limit === undefined) {
      problems.push(`${where(w.doc)}: needs a memory request and limit`);
      continue;
    }
    const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
    if (mb(request) < measured) {
      problems.push(
        `${where(w.doc)}: requests ${mb(request)} MiB of memory, below the ${measured} MiB ${w.target} was measured to hold idle (${MEASUREMENT})`,
      );
    }
    if (limit <= request) {
      problems.push(`${where(w.doc)}: its memory limit (${mb(limit)} MiB) leaves no room above its request`);
    }
  }
}

function readIdle(): IdleMemory {
  return JSON.parse(readFileSync(IDLE_MEMORY_FILE, "utf8")) as IdleMemory;
}
