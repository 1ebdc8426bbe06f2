import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CONSUMER_GROUPS,
  EXTRACTOR_TARGETS,
  FileType,
  MessageSchemas,
  uploadedTopic,
} from "@locus/contracts";
import { scrapeConfig, splitLayout, TARGETS } from "../src/index.ts";

describe("the extractors' table and what is derived from it", () => {
  it("gives every kind of file an upload topic, and an extractor target whose group takes only that topic", () => {
    expect(FileType.options).toEqual(["pdf", "image", "audio", "video", "document"]);
    for (const kind of FileType.options) {
      const topic = uploadedTopic(kind);
      expect(MessageSchemas[topic]).toBeDefined();
      const consumers = Object.entries(CONSUMER_GROUPS).filter(([, topics]) =>
        (topics as readonly string[]).includes(topic),
      );
      expect(consumers).toEqual([[`extractor-${kind}`, [topic]]]);
    }
    expect(EXTRACTOR_TARGETS).toHaveLength(FileType.options.length);
    for (const target of EXTRACTOR_TARGETS) expect(TARGETS).toContain(target);
  });
});

describe("splitLayout", () => {
  const ports = (layout: { port: number }[]) => layout.map((p) => p.port);

  it("runs every target once, the gateway on the base port and each other process on the next port", () => {
    const layout = splitLayout({ basePort: 9000, pdfExtractors: 1, gateways: 1, encoder: true });
    expect(layout[0]).toEqual({ name: "gateway", target: "gateway", port: 9000 });
    expect(ports(layout)).toEqual(layout.map((_, i) => 9000 + i));
    expect(layout.map((p) => p.target).sort()).toEqual(TARGETS.filter((t) => t !== "all").sort());
    expect(layout.map((p) => p.name)).toEqual(layout.map((p) => p.target));
  });

  it("numbers the copies of the gateway and the PDF extractor, and leaves the encoder out where it does not run", () => {
    const layout = splitLayout({ basePort: 100, pdfExtractors: 3, gateways: 2, encoder: false });
    const names = layout.map((p) => p.name);
    expect(names.filter((n) => n.startsWith("gateway"))).toEqual(["gateway-1", "gateway-2"]);
    expect(names.filter((n) => n.startsWith("extractor-pdf"))).toEqual([
      "extractor-pdf-1",
      "extractor-pdf-2",
      "extractor-pdf-3",
    ]);
    expect(names).not.toContain("encoder");
    expect(layout[0]?.port).toBe(100);
    expect(new Set(ports(layout)).size).toBe(layout.length);
    expect(Math.max(...ports(layout))).toBe(100 + layout.length - 1);
  });

  it("gives each process a metrics port of its own, counting up in the same order, so a restart keeps it", () => {
    const options = { basePort: 8080, pdfExtractors: 2, gateways: 2, encoder: true, metricsBasePort: 9464 };
    const layout = splitLayout(options);
    expect(layout.map((p) => p.metricsPort)).toEqual(layout.map((_, i) => 9464 + i));
    expect(layout[0]).toEqual({ name: "gateway-1", target: "gateway", port: 8080, metricsPort: 9464 });
    // The layout is a function of the settings alone: the launcher restarting a process finds the same port.
    expect(splitLayout(options)).toEqual(layout);
    expect(
      splitLayout({ ...options, metricsBasePort: undefined }).every((p) => p.metricsPort === undefined),
    ).toBe(true);
  });
});

describe("scrapeConfig", () => {
  it("writes a Prometheus config promtool accepts, one target per process labelled with its name and component", () => {
    const layout = splitLayout({
      basePort: 8080,
      pdfExtractors: 2,
      gateways: 1,
      encoder: true,
      metricsBasePort: 9464,
    });
    const yaml = scrapeConfig(layout, "127.0.0.1");
    const dir = mkdtempSync(join(tmpdir(), "locus-scrape-"));
    try {
      const file = join(dir, "prometheus.yml");
      writeFileSync(file, yaml);
      const check = spawnSync("promtool", ["check", "config", file], { encoding: "utf8" });
      expect({ status: check.status, output: check.stdout + check.stderr }).toMatchObject({ status: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const p of layout) {
      expect(yaml).toContain(
        `- targets: ["127.0.0.1:${p.metricsPort}"]\n        labels: { instance: "${p.name}", component: "${p.target}" }`,
      );
    }
    expect(() =>
      scrapeConfig(splitLayout({ basePort: 1, pdfExtractors: 1, gateways: 1, encoder: false }), "h"),
    ).toThrow(/no metrics ports/);
  });
});
