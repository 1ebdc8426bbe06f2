import type { Logger } from "./logger.ts";

/** Something that runs until stopped: a module once started. */
export interface Stoppable {
  stop(): Promise<void>;
  /**
   * Work a module began at its start and finishes while the modules after it start (a warm-up):
   * the manager's start resolves once every module's has. It never rejects.
   */
  warm?: Promise<void>;
}

/**
 * A module is one deployable target (gateway, files, ...). It names the modules it needs started
 * first; the manager starts the closure of the requested targets in dependency order and stops
 * them in reverse, like Loki's module manager.
 */
export interface ModuleDescriptor<Name extends string = string> {
  name: Name;
  dependsOn: readonly Name[];
  start(): Promise<Stoppable>;
}

export class ModuleManager<Name extends string> {
  private readonly running: { name: Name; module: Stoppable }[] = [];

  constructor(
    private readonly descriptors: readonly ModuleDescriptor<Name>[],
    private readonly logger: Logger,
  ) {}

  /** Modules to start for the given targets, dependencies first. Fails on unknown names and cycles. */
  plan(targets: readonly Name[]): Name[] {
    const byName = new Map(this.descriptors.map((d) => [d.name, d]));
    const order: Name[] = [];
    const state = new Map<Name, "visiting" | "done">();
    const visit = (name: Name, path: Name[]): void => {
      const descriptor = byName.get(name);
      if (!descriptor) throw new Error(`Unknown module "${name}"`);
      if (state.get(name) === "done") return;
      if (state.get(name) === "visiting") throw new Error(`Module cycle: ${[...path, name].join(" -> ")}`);
      state.set(name, "visiting");
      for (const dep of descriptor.dependsOn) visit(dep, [...path, name]);
      state.set(name, "done");
      order.push(name);
    };
    for (const t of targets) visit(t, []);
    return order;
  }

  async start(targets: readonly Name[]): Promise<void> {
    const byName = new Map(this.descriptors.map((d) => [d.name, d]));
    for (const name of this.plan(targets)) {
      const descriptor = byName.get(name);
      if (!descriptor) continue;
      try {
        const module = await descriptor.start();
        this.running.push({ name, module });
        this.logger.info({ module: name }, "module started");
      } catch (err) {
        // Leave nothing half-started behind.
        await this.stop();
        throw err;
      }
    }
    await Promise.all(this.running.flatMap((entry) => (entry.module.warm ? [entry.module.warm] : [])));
  }

  /** Stops every started module in reverse order; keeps going when one fails to stop. */
  async stop(): Promise<void> {
    while (this.running.length > 0) {
      const entry = this.running.pop();
      if (!entry) break;
      try {
        await entry.module.stop();
        this.logger.info({ module: entry.name }, "module stopped");
      } catch (err) {
        this.logger.error({ module: entry.name, err }, "module failed to stop cleanly");
      }
    }
  }
}
