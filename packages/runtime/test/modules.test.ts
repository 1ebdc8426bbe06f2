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
});
