import type { Logger } from "./logger.ts";

/** A module once started: runs until stopped, and may warm up or wait for the others to start. */
export interface RunningModule {
  stop(): Promise<void>;
  /**
   * Work a module began at its start and finishes while the modules after it start (a warm-up):
   * the manager's start resolves once every module's has. It never rejects.
   */
  warm?: Promise<void>;
  /**
   * Called once every module of the process has started, so every consumer is subscribed: work
   * that must not begin before (the files module's recovery re-queues unfinished files, which on
   * the in-process bus only reach consumers already listening).
   */
  afterStart?(): Promise<void>;
}

/** The modules started so far, by name: what a module's start may use of those before it. */
export interface StartedModules<Name extends string, Module extends RunningModule> {
  get(name: Name): Module | undefined;
}

/**
 * A module is one deployable target (gateway, files, ...). It names the modules it needs started
 * first (`dependsOn`: started with it, always) and those it uses when they run in the same process
 * (`after`: started first when the targets include them, not started for it otherwise); the
 * manager starts the closure of the requested targets in that order and stops them in reverse,
 * like Loki's module manager.
 */
export interface ModuleDescriptor<
  Name extends string = string,
  Module extends RunningModule = RunningModule,
> {
  name: Name;
  dependsOn: readonly Name[];
  after?: readonly Name[];
  start(started: StartedModules<Name, Module>): Promise<Module>;
}

export class ModuleManager<Name extends string, Module extends RunningModule = RunningModule> {
  private readonly running: { name: Name; module: Module }[] = [];
  private readonly byName: Map<Name, ModuleDescriptor<Name, Module>>;

  constructor(
    descriptors: readonly ModuleDescriptor<Name, Module>[],
    private readonly logger: Logger,
  ) {
    this.byName = new Map(descriptors.map((d) => [d.name, d]));
  }

  private descriptor(name: Name): ModuleDescriptor<Name, Module> {
    const descriptor = this.byName.get(name);
    if (!descriptor) throw new Error(`Unknown module "${name}"`);
    return descriptor;
  }

  /** Modules to start for the given targets, dependencies first. Fails on unknown names and cycles. */
  plan(targets: readonly Name[]): Name[] {
    // What runs: the targets and, transitively, what they depend on.
    const included = new Set<Name>();
    const include = (name: Name): void => {
      if (included.has(name)) return;
      included.add(name);
      for (const dep of this.descriptor(name).dependsOn) include(dep);
    };
    for (const t of targets) include(t);
    // In which order: each after what it depends on and what it uses of the modules that run.
    const order: Name[] = [];
    const state = new Map<Name, "visiting" | "done">();
    const visit = (name: Name, path: Name[]): void => {
      if (state.get(name) === "done") return;
      if (state.get(name) === "visiting") throw new Error(`Module cycle: ${[...path, name].join(" -> ")}`);
      state.set(name, "visiting");
      const descriptor = this.descriptor(name);
      const before = [...descriptor.dependsOn, ...(descriptor.after ?? []).filter((n) => included.has(n))];
      for (const dep of before) visit(dep, [...path, name]);
      state.set(name, "done");
      order.push(name);
    };
    for (const t of targets) visit(t, []);
    return order;
  }

  /** The started module of that name, if this process runs it. */
  get(name: Name): Module | undefined {
    return this.running.find((entry) => entry.name === name)?.module;
  }

  async start(targets: readonly Name[]): Promise<void> {
    const started: StartedModules<Name, Module> = { get: (name) => this.get(name) };
    try {
      for (const name of this.plan(targets)) {
        const module = await this.descriptor(name).start(started);
        this.running.push({ name, module });
        this.logger.info({ module: name }, "module started");
      }
      for (const { module } of this.running) await module.afterStart?.();
    } catch (err) {
      // Leave nothing half-started behind.
      await this.stop();
      throw err;
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
