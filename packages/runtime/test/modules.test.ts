import { pino } from "pino";
import { ModuleManager, type ModuleDescriptor } from "../src/modules.ts";

const silent = pino({ level: "silent" });

describe("ModuleManager", () => {
  it("starts modules in dependency order, resolves once every warm-up is done, and stops in reverse", async () => {
    const events: string[] = [];
    let finishWarmUp: () => void = () => undefined;
    const warm = new Promise<void>((resolve) => (finishWarmUp = resolve)).then(() => {
      events.push("reader warm");
    });
    const module = (name: string, dependsOn: string[], extra: { warm?: Promise<void> } = {}) =>
      ({
        name,
        dependsOn,
        start: () => {
          events.push(`start ${name}`);
          const stop = () => {
            events.push(`stop ${name}`);
            return Promise.resolve();
          };
          return Promise.resolve({ stop, ...extra });
        },
      }) satisfies ModuleDescriptor;
    const manager = new ModuleManager(
      [module("gateway", ["files"]), module("files", []), module("reader", [], { warm })],
      silent,
    );
    let started = false;
    const starting = manager.start(["reader", "gateway"]).then(() => (started = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Every module started while the reader warmed; the start waits for the warm-up.
    expect(events).toEqual(["start reader", "start files", "start gateway"]);
    expect(started).toBe(false);
    finishWarmUp();
    await starting;
    expect(events.at(-1)).toBe("reader warm");
    await manager.stop();
    expect(events.slice(-3)).toEqual(["stop gateway", "stop files", "stop reader"]);
  });

  it("starts a module after the ones it uses when they run in the process, and alone otherwise", () => {
    const module = (name: string, dependsOn: string[], after: string[] = []) =>
      ({
        name,
        dependsOn,
        after,
        start: () => Promise.resolve({ stop: () => Promise.resolve() }),
      }) satisfies ModuleDescriptor;
    const manager = new ModuleManager(
      [
        module("gateway", [], ["files", "search"]),
        module("files", []),
        module("search", []),
        module("all", ["gateway", "files", "search"]),
      ],
      silent,
    );
    // Listed first, but it uses the other two: they start before it.
    expect(manager.plan(["all"])).toEqual(["files", "search", "gateway", "all"]);
    // Alone, it does not pull in what it only uses.
    expect(manager.plan(["gateway"])).toEqual(["gateway"]);
    expect(manager.plan(["gateway", "search"])).toEqual(["search", "gateway"]);
    expect(() => manager.plan(["nothing"])).toThrow('Unknown module "nothing"');
  });

  it("gives each module the ones started before it, and calls every afterStart once all have started", async () => {
    const events: string[] = [];
    interface Counter {
      stop(): Promise<void>;
      afterStart?(): Promise<void>;
      count?: number;
    }
    const manager = new ModuleManager<"files" | "gateway", Counter>(
      [
        {
          name: "files",
          dependsOn: [],
          start: () => {
            events.push("start files");
            return Promise.resolve({
              count: 7,
              stop: () => Promise.resolve(),
              afterStart: () => {
                events.push("recover files");
                return Promise.resolve();
              },
            });
          },
        },
        {
          name: "gateway",
          dependsOn: ["files"],
          start: (started) => {
            events.push(`start gateway with ${started.get("files")?.count ?? "nothing"}`);
            return Promise.resolve({ stop: () => Promise.resolve() });
          },
        },
      ],
      silent,
    );
    await manager.start(["gateway"]);
    expect(events).toEqual(["start files", "start gateway with 7", "recover files"]);
    expect(manager.get("files")?.count).toBe(7);
    await manager.stop();
    expect(manager.get("files")).toBeUndefined();
  });

  it("stops what it started when an afterStart fails", async () => {
    const stopped: string[] = [];
    const manager = new ModuleManager(
      ["a", "b"].map((name) => ({
        name,
        dependsOn: [],
        start: () =>
          Promise.resolve({
            stop: () => {
              stopped.push(name);
              return Promise.resolve();
            },
            ...(name === "b" ? { afterStart: () => Promise.reject(new Error("recovery failed")) } : {}),
          }),
      })),
      silent,
    );
    await expect(manager.start(["a", "b"])).rejects.toThrow("recovery failed");
    expect(stopped).toEqual(["b", "a"]);
  });
});
