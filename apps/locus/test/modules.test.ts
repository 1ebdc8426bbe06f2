import { randomBytes } from "node:crypto";
import { createLogger, loadConfig, ModuleManager } from "@locus/runtime";
import { Infrastructure } from "../src/infrastructure.ts";
import { DEPENDENCIES, moduleDescriptors, type ModuleName } from "../src/modules.ts";

/** What a process would start for `targets`, in order (planned only: nothing is built). */
function planFor(targets: string, env: Record<string, string> = {}): ModuleName[] {
  const config = loadConfig({
    LOCUS_TARGETS: targets,
    LOCUS_LOG_LEVEL: "silent",
    ...(targets === "all"
      ? {}
      : {
          LOCUS_BUS: "rabbitmq",
          AMQP_URL: "amqp://localhost",
          LOCUS_METADATA_STORE: "postgres",
          LOCUS_SEARCH_INDEX: "postgres",
          DATABASE_URL: "postgres://localhost/locus",
          LOCUS_BLOB_STORE: "s3",
          S3_BUCKET: "locus",
          LOCUS_INTERNAL_SECRET: randomBytes(32).toString("base64url"),
          LOCUS_FILES_URL: "http://files",
          LOCUS_SEARCH_URL: "http://search",
          LOCUS_WEBHOOKS_URL: "http://webhooks",
        }),
    ...env,
  });
  const logger = createLogger("test", "silent");
  return new ModuleManager(moduleDescriptors(new Infrastructure(config, logger), logger), logger).plan(
    config.targets,
  );
}

describe("the modules a process starts", () => {
  it("starts what each target declares it runs on, before it, and nothing else", () => {
    expect(planFor("gateway")).toEqual(["metadata-store", "gateway"]);
    expect(planFor("indexer")).toEqual(["blob-store", "bus", "search-index", "metadata-store", "indexer"]);
    expect(planFor("extractor-audio")).toEqual(["blob-store", "bus", "speech", "extractor-audio"]);
    expect(planFor("extractor-pdf")).toEqual(["blob-store", "bus", "ocr", "extractor-pdf"]);
    // Without OCR of scanned pages, the PDF extractor never builds the recognisers.
    expect(planFor("extractor-pdf", { LOCUS_PDF_OCR: "false" })).toEqual([
      "blob-store",
      "bus",
      "extractor-pdf",
    ]);
  });

  it("runs every target in the all-in-one process, each after what it needs, the gateway after what it uses", () => {
    const plan = planFor("all");
    expect(plan.at(-1)).toBe("all");
    for (const target of ["files", "search", "webhooks"] as const) {
      expect(plan.indexOf(target)).toBeLessThan(plan.indexOf("gateway"));
    }
    for (const dependency of DEPENDENCIES) expect(plan).toContain(dependency);
    expect(plan.indexOf("speech")).toBeLessThan(plan.indexOf("extractor-audio"));
    expect(plan.indexOf("bus")).toBeLessThan(plan.indexOf("files"));
    expect(new Set(plan).size).toBe(plan.length);
  });
});
