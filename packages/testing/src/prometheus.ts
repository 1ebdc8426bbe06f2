// A real Prometheus (Debian's `prometheus` package, which .ci/packages.sh installs) scraping the
// processes a test started, every second, answering PromQL through its HTTP API.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RunningPrometheus {
  url: string;
  /** The instant vector's samples for `promql`: their labels and values. */
  query(promql: string): Promise<{ labels: Record<string, string>; value: number }[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts Prometheus scraping `targets` (host:port, their /metrics), labelled by `service`, every
 * second; resolves once it answers. Fails, naming the package, when it is not installed.
 */
export async function startPrometheus(targets: Record<string, string>): Promise<RunningPrometheus> {
  if (spawnSync("sh", ["-c", "command -v prometheus"], { stdio: "ignore" }).status !== 0) {
    throw new Error("Prometheus is not installed: apt-get install prometheus (.ci/packages.sh does)");
  }
  const dir = mkdtempSync(join(tmpdir(), "locus-prometheus-"));
  const scrapeConfigs = Object.entries(targets).map(([service, target]) => ({
    job_name: service,
    scrape_interval: "1s",
    static_configs: [{ targets: [target], labels: { service } }],
  }));
  writeFileSync(join(dir, "prometheus.yml"), JSON.stringify({ scrape_configs: scrapeConfigs }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => (log = (log + chunk.toString("utf8")).slice(-4000)));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Prometheus did not start:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== "success") throw new Error(`${promql}: ${body.error ?? res.status}`);
      return (body.data?.result ?? []).map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
    },
    stop,
  };
}
