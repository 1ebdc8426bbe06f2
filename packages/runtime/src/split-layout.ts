import { TARGETS, type Target } from "./config-values.ts";

/** One process of the split shape on one machine: its name (logs, RabbitMQ), what it runs, its port. */
export interface SplitProcess {
  name: string;
  target: Exclude<Target, "all">;
  port: number;
}

/**
 * The processes `pnpm start:split` runs (and the tests' split stack expects), one per target in
 * LOCUS_TARGETS's order, each on the next port from `basePort`: the first gateway on `basePort`
 * itself, `gateways` gateways and `pdfExtractors` PDF extractors in all (numbered `-1`, `-2`… when
 * more than one), the encoder only where the meaning stage runs. A new target takes its place
 * here without another edit.
 */
export function splitLayout(options: {
  basePort: number;
  pdfExtractors: number;
  gateways: number;
  encoder: boolean;
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
    .map((process, i) => ({ ...process, port: options.basePort + i }));
}
