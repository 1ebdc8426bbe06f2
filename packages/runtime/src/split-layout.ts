import { TARGETS, type Target } from "./config-values.ts";

/**
 * One process of the split shape on one machine: its name (logs, RabbitMQ, the scrape config's
 * `instance`), what it runs, its port, and the port of its metrics alone when there are such ports.
 */
export interface SplitProcess {
  name: string;
  target: Exclude<Target, "all">;
  port: number;
  metricsPort?: number;
}

/**
 * The processes `pnpm start:split` runs (and the tests' split stack expects), one per target in
 * LOCUS_TARGETS's order, each on the next port from `basePort`: the first gateway on `basePort`
 * itself, `gateways` gateways and `pdfExtractors` PDF extractors in all (numbered `-1`, `-2`… when
 * more than one), the encoder only where the meaning stage runs. A new target takes its place
 * here without another edit. With `metricsBasePort`, each process also gets a metrics port of its
 * own, counting up from it in the same order: the same process gets the same port after every
 * restart, so a scrape config (scrapeConfig) stays true.
 */
export function splitLayout(options: {
  basePort: number;
  pdfExtractors: number;
  gateways: number;
  encoder: boolean;
  metricsBasePort?: number | undefined;
}): SplitProcess[] {
  const copies = (target: Exclude<Target, "all">): number => {
    if (target === "gateway") return options.gateways;
    if (target === "extractor-pdf") return options.pdfExtractors;
    if (target === "encoder") return options.encoder ? 1 : 0;
    return 1;
  };
  const targets = TARGETS.filter((t): t is Exclude<Target, "all"> => t !== "all");
  return targets
    .flatMap((target) => {
      const n = copies(target);
      return Array.from({ length: n }, (_, i) => ({ name: n === 1 ? target : `${target}-${i + 1}`, target }));
    })
    .map((process, i) => ({
      ...process,
      port: options.basePort + i,
      ...(options.metricsBasePort === undefined ? {} : { metricsPort: options.metricsBasePort + i }),
    }));
}

/**
 * The Prometheus scrape config of a layout with metrics ports: one job, `locus`, with a target per
 * process on `host`, labelled `instance` (the process's name, stable across restarts where the
 * address would say little) and `component` (what it runs), the labels k8s/monitoring's PodMonitor
 * gives the same series, so the alerts and dashboard read both alike.
 */
export function scrapeConfig(layout: readonly SplitProcess[], host: string): string {
  const targets = layout.flatMap((p) =>
    p.metricsPort === undefined
      ? []
      : [
          `      - targets: ["${host}:${p.metricsPort}"]`,
          `        labels: { instance: "${p.name}", component: "${p.target}" }`,
        ],
  );
  if (targets.length === 0) throw new Error("the split layout has no metrics ports to scrape");
  return [
    "# Written by pnpm start:split: every process's metrics port (LOCUS_METRICS_PORT counting up).",
    "scrape_configs:",
    "  - job_name: locus",
    "    metrics_path: /metrics",
    "    static_configs:",
    ...targets,
    "",
  ].join("\n");
}
