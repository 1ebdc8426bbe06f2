import { performance } from "node:perf_hooks";

/** Options of one job given to {@link CpuSlots.run}. */
export interface RunOptions {
  /**
   * Cancels the job while it waits for a slot: it leaves the queue and `run` rejects with the
   * signal's reason. Once the job has started, stopping it is the work's own business (pass the
   * same signal to it).
   */
  signal?: AbortSignal;
}

/**
 * Runs CPU-heavy work when the processor has room for it. What an extraction engine depends on, so
 * that it works the same under the process's shared {@link FairScheduler} and under
 * {@link UNLIMITED}.
 */
export interface CpuSlots {
  /**
   * Runs `work` once a slot is free, and settles as it does.
   * @param owner whose work this is (a file's id): jobs are shared out fairly between owners.
   */
  run<T>(owner: string, work: () => Promise<T>, options?: RunOptions): Promise<T>;
}

/**
 * Runs work at once, without limit: for an engine used outside the service (the CLI, a test),
 * where nothing else competes for the processor.
 */
export const UNLIMITED: CpuSlots = {
  // An executor turns a synchronous throw of `work` into a rejection, as the scheduler does.
  run: <T>(_owner: string, work: () => Promise<T>) => new Promise<T>((resolve) => resolve(work())),
};

/** Told about each job as it starts, for metrics. */
export interface FairSchedulerObserver {
  /** A job started after waiting this long for a slot (0 when one was free). */
  waited(ms: number): void;
}

export interface FairSchedulerOptions {
  /** Most jobs running at once: the number of cores (os.availableParallelism()). */
  slots: number;
  observer?: FairSchedulerObserver;
}

/** What the scheduler holds, for a gauge. */
export interface FairSchedulerStats {
  /** Jobs holding a slot. */
  running: number;
  /** Jobs queued for one. */
  waiting: number;
  /** Owners with a job running or waiting. */
  owners: number;
}

interface WaitingJob {
  readonly queuedAt: number;
  start(): void;
}

interface OwnerQueue {
  readonly owner: string;
  readonly waiting: WaitingJob[];
  running: number;
}

/**
 * Shares a fixed number of slots (one per core) between the CPU-heavy jobs of every extractor in
 * the process, fairly between owners (files).
 *
 * A plain first-come-first-served queue would make a ten-second voice memo's two jobs wait behind
 * all three hundred OCR jobs of a scan queued a moment earlier. Instead owners are served in turn:
 * when a slot frees, the next job is the oldest of the first owner after the one served last that
 * has a job waiting. An owner's single job therefore waits behind at most one job of each other
 * owner. Within an owner, jobs run in the order they came.
 *
 * Do not call `run` from inside a running job and wait for it: with every slot taken by such jobs
 * nothing could ever start.
 */
export class FairScheduler implements CpuSlots {
  private readonly slots: number;
  private readonly observer: FairSchedulerObserver | undefined;
  /**
   * Owners with a job running or waiting, in the order they arrived: the round. An owner keeps its
   * place while its jobs run, so that "the one after the owner served last" stays well defined.
   */
  private readonly round: OwnerQueue[] = [];
  private readonly byOwner = new Map<string, OwnerQueue>();
  /** Index in `round` of the owner served last; -1 before the first. */
  private lastServed = -1;
  private running = 0;
  private waiting = 0;

  constructor(options: FairSchedulerOptions) {
    if (!Number.isInteger(options.slots) || options.slots < 1) {
      throw new RangeError(
        `A FairScheduler needs a whole number of slots, at least 1 (got ${options.slots})`,
      );
    }
    this.slots = options.slots;
    this.observer = options.observer;
  }

  async run<T>(owner: string, work: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    const { signal } = options;
    signal?.throwIfAborted();
    const queue = this.queueOf(owner);
    if (!(await this.slotFor(queue, signal))) {
      // Only an abort turns a job away, and then its signal throws its reason.
      signal?.throwIfAborted();
      throw new Error("FairScheduler: a job left the queue without being aborted");
    }
    // Inside the try, a synchronous throw of `work` frees the slot too.
    try {
      return await work();
    } finally {
      this.release(queue);
    }
  }

  stats(): FairSchedulerStats {
    return { running: this.running, waiting: this.waiting, owners: this.round.length };
  }

  private queueOf(owner: string): OwnerQueue {
    let queue = this.byOwner.get(owner);
    if (!queue) {
      queue = { owner, waiting: [], running: 0 };
      this.byOwner.set(owner, queue);
      this.round.push(queue);
    }
    return queue;
  }

  /** Queues a job: true once it holds a slot, false if its signal aborted it first. */
  private slotFor(queue: OwnerQueue, signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const job: WaitingJob = {
        queuedAt: performance.now(),
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          this.notifyWaited(performance.now() - job.queuedAt);
          resolve(true);
        },
      };
      const onAbort = () => {
        const at = queue.waiting.indexOf(job);
        if (at < 0) return;
        queue.waiting.splice(at, 1);
        this.waiting -= 1;
        this.forgetIfIdle(queue);
        resolve(false);
      };
      queue.waiting.push(job);
      this.waiting += 1;
      signal?.addEventListener("abort", onAbort, { once: true });
      this.startWhatFits();
    });
  }

  private startWhatFits(): void {
    while (this.running < this.slots && this.waiting > 0) {
      const queue = this.nextOwner();
      const job = queue.waiting.shift()!;
      this.waiting -= 1;
      this.running += 1;
      queue.running += 1;
      job.start();
    }
  }

  /** The first owner after the one served last that has a job waiting (there is one: waiting > 0). */
  private nextOwner(): OwnerQueue {
    const count = this.round.length;
    for (let step = 1; step <= count; step += 1) {
      const at = (this.lastServed + step) % count;
      const queue = this.round[at]!;
      if (queue.waiting.length > 0) {
        this.lastServed = at;
        return queue;
      }
    }
    throw new Error("FairScheduler: a job is counted as waiting but no owner has one");
  }

  private release(queue: OwnerQueue): void {
    this.running -= 1;
    queue.running -= 1;
    this.forgetIfIdle(queue);
    this.startWhatFits();
  }

  /** Takes an owner with nothing running or waiting out of the round, keeping the turn where it was. */
  private forgetIfIdle(queue: OwnerQueue): void {
    if (queue.running > 0 || queue.waiting.length > 0) return;
    const at = this.round.indexOf(queue);
    this.round.splice(at, 1);
    this.byOwner.delete(queue.owner);
    // The owners after it moved down one place: the turn moves with them, so the owner that
    // followed the one served last still comes next.
    if (at <= this.lastServed) this.lastServed -= 1;
  }

  private notifyWaited(ms: number): void {
    try {
      this.observer?.waited(ms);
    } catch {
      // A metric that fails must never stop a job from running or leak its slot.
    }
  }
}
