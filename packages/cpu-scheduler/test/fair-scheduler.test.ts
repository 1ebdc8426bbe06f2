import { FairScheduler, UNLIMITED, type CpuSlots } from "../src/index.ts";

/** A job whose end the test decides: no timing involved. */
interface HeldJob {
  readonly name: string;
  finish(): void;
  fail(err: Error): void;
}

/**
 * Queues jobs on a scheduler and records the order they start in. Each job runs until the test
 * finishes it, so the order is decided by the scheduler alone.
 */
function recorder(slots: CpuSlots) {
  const started: string[] = [];
  const running = new Map<string, HeldJob>();
  let concurrent = 0;
  let mostConcurrent = 0;
  const submit = (owner: string, name: string, options?: { signal?: AbortSignal }) =>
    slots.run(
      owner,
      () =>
        new Promise<string>((resolve, reject) => {
          started.push(name);
          concurrent += 1;
          mostConcurrent = Math.max(mostConcurrent, concurrent);
          const end = () => {
            concurrent -= 1;
            running.delete(name);
          };
          running.set(name, {
            name,
            finish: () => {
              end();
              resolve(name);
            },
            fail: (err) => {
              end();
              reject(err);
            },
          });
        }),
      options,
    );
  /** Lets the scheduler's promise callbacks run (a job's end frees its slot a few ticks later). */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  /** Finishes the oldest running job and waits for the next to start. */
  const finishOldest = async () => {
    const [oldest] = running.values();
    oldest?.finish();
    await settle();
  };
  return {
    started,
    running,
    submit,
    settle,
    finishOldest,
    mostConcurrent: () => mostConcurrent,
  };
}

/** The simplest semaphore: one queue, first come first served. What FairScheduler must beat. */
class FifoSemaphore implements CpuSlots {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly slots: number) {}
  async run<T>(_owner: string, work: () => Promise<T>): Promise<T> {
    if (this.active >= this.slots) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.active += 1;
    try {
      return await work();
    } finally {
      this.active -= 1;
      this.queue.shift()?.();
    }
  }
}

/**
 * A scan queues 20 page jobs, then a voice memo queues 1; one slot. Returns how many of the scan's
 * jobs had started when the memo's did.
 */
async function scanJobsBeforeMemo(slots: CpuSlots): Promise<number> {
  const jobs = recorder(slots);
  const all: Promise<string>[] = [];
  for (let page = 1; page <= 20; page += 1) all.push(jobs.submit("scan", `scan-${page}`));
  all.push(jobs.submit("memo", "memo"));
  await jobs.settle();
  while (!jobs.started.includes("memo")) await jobs.finishOldest();
  const before = jobs.started.indexOf("memo");
  while (jobs.running.size > 0) await jobs.finishOldest();
  await Promise.all(all);
  return before;
}

describe("FairScheduler", () => {
  it("starts a newcomer's job after at most one more job of an owner with many queued", async () => {
    // scan-1 was already running when the memo came: at most one more scan job may go first.
    expect(await scanJobsBeforeMemo(new FairScheduler({ slots: 1 }))).toBeLessThanOrEqual(2);
  });

  it("(the same check fails on a first-come-first-served semaphore, so it tests fairness)", async () => {
    expect(await scanJobsBeforeMemo(new FifoSemaphore(1))).toBe(20);
  });

  it("serves owners in turn, and each owner's jobs in the order they came", async () => {
    const jobs = recorder(new FairScheduler({ slots: 1 }));
    const all: Promise<string>[] = [];
    for (const owner of ["a", "b", "c"]) {
      for (let n = 1; n <= 3; n += 1) all.push(jobs.submit(owner, `${owner}${n}`));
    }
    await jobs.settle();
    while (jobs.running.size > 0) await jobs.finishOldest();
    await Promise.all(all);
    expect(jobs.started).toEqual(["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]);
  });

  it("never runs more jobs at once than it has slots, and fills them all", async () => {
    const scheduler = new FairScheduler({ slots: 3 });
    const jobs = recorder(scheduler);
    const all: Promise<string>[] = [];
    for (let n = 0; n < 40; n += 1) all.push(jobs.submit(`owner-${n % 7}`, `job-${n}`));
    await jobs.settle();
    expect(scheduler.stats()).toEqual({ running: 3, waiting: 37, owners: 7 });
    while (jobs.running.size > 0) {
      expect(jobs.running.size).toBeLessThanOrEqual(3);
      await jobs.finishOldest();
    }
    await Promise.all(all);
    expect(jobs.started).toHaveLength(40);
    expect(jobs.mostConcurrent()).toBe(3);
    expect(scheduler.stats()).toEqual({ running: 0, waiting: 0, owners: 0 });
  });

  it("takes an aborted job out of the queue, rejecting with the signal's reason", async () => {
    const scheduler = new FairScheduler({ slots: 1 });
    const jobs = recorder(scheduler);
    const first = jobs.submit("a", "first");
    const controller = new AbortController();
    const cancelled = jobs.submit("b", "cancelled", { signal: controller.signal });
    const last = jobs.submit("c", "last");
    await jobs.settle();
    expect(scheduler.stats()).toEqual({ running: 1, waiting: 2, owners: 3 });

    const reason = new Error("the file was deleted");
    controller.abort(reason);
    await expect(cancelled).rejects.toBe(reason);
    expect(scheduler.stats()).toEqual({ running: 1, waiting: 1, owners: 2 });

    while (jobs.running.size > 0) await jobs.finishOldest();
    await Promise.all([first, last]);
    expect(jobs.started).toEqual(["first", "last"]);
  });

  it("rejects at once a job whose signal is already aborted, and leaves a started job's abort to it", async () => {
    const scheduler = new FairScheduler({ slots: 1 });
    const jobs = recorder(scheduler);
    let ran = false;
    const work = () => {
      ran = true;
      return Promise.resolve();
    };
    await expect(scheduler.run("a", work, { signal: AbortSignal.abort("gone") })).rejects.toBe("gone");
    expect(ran).toBe(false);
    expect(scheduler.stats()).toEqual({ running: 0, waiting: 0, owners: 0 });

    const controller = new AbortController();
    const running = jobs.submit("a", "running", { signal: controller.signal });
    await jobs.settle();
    controller.abort();
    await jobs.finishOldest();
    await expect(running).resolves.toBe("running");
  });

  it("frees the slot of a job that throws or rejects", async () => {
    const scheduler = new FairScheduler({ slots: 1 });
    const jobs = recorder(scheduler);
    const failing = jobs.submit("a", "failing");
    const throwing = scheduler.run("b", () => {
      throw new Error("thrown before any promise");
    });
    const next = jobs.submit("c", "next");
    await jobs.settle();
    jobs.running.get("failing")!.fail(new Error("pdftoppm crashed"));
    await expect(failing).rejects.toThrow("pdftoppm crashed");
    await expect(throwing).rejects.toThrow("thrown before any promise");
    await jobs.settle();
    expect(jobs.started).toEqual(["failing", "next"]);
    await jobs.finishOldest();
    await expect(next).resolves.toBe("next");
    expect(scheduler.stats()).toEqual({ running: 0, waiting: 0, owners: 0 });
  });

  it("tells its observer how long each job waited for a slot", async () => {
    const waits: number[] = [];
    const scheduler = new FairScheduler({ slots: 1, observer: { waited: (ms) => waits.push(ms) } });
    const jobs = recorder(scheduler);
    const all = [jobs.submit("a", "one"), jobs.submit("b", "two")];
    await jobs.settle();
    expect(waits).toHaveLength(1);
    while (jobs.running.size > 0) await jobs.finishOldest();
    await Promise.all(all);
    expect(waits).toHaveLength(2);
    for (const ms of waits) expect(ms).toBeGreaterThanOrEqual(0);
  });

  it("keeps running jobs when its observer throws", async () => {
    const scheduler = new FairScheduler({
      slots: 1,
      observer: {
        waited: () => {
          throw new Error("metrics broke");
        },
      },
    });
    await expect(scheduler.run("a", () => Promise.resolve(7))).resolves.toBe(7);
    expect(scheduler.stats().running).toBe(0);
  });

  it("refuses a slot count that is not a whole number of at least one", () => {
    expect(() => new FairScheduler({ slots: 0 })).toThrow(RangeError);
    expect(() => new FairScheduler({ slots: 1.5 })).toThrow(RangeError);
  });
});

describe("UNLIMITED", () => {
  it("runs work at once, and turns a synchronous throw into a rejection", async () => {
    const jobs = recorder(UNLIMITED);
    const all = [1, 2, 3, 4, 5].map((n) => jobs.submit("a", `job-${n}`));
    expect(jobs.running.size).toBe(5);
    while (jobs.running.size > 0) await jobs.finishOldest();
    await Promise.all(all);
    await expect(
      UNLIMITED.run("a", () => {
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
  });
});
