/**
 * Time as an injected dependency: the system clock in production, a FakeClock in tests, so that
 * code with timers (the controller's rounds and deadlines, a fake backend's programs) runs in
 * milliseconds of test time whatever the seconds it waits for.
 */

/** Opaque handle of a timer of a Clock. */
export type TimerId = { readonly id: number } | ReturnType<typeof setTimeout>;

export interface Clock {
  now_ms(): number;
  setTimeout(callback: () => void, delay_ms: number): TimerId;
  setInterval(callback: () => void, period_ms: number): TimerId;
  /** Cancels a timer of either kind; unknown or spent handles are ignored. */
  clear(timer: TimerId): void;
  /**
   * How long (wall ms) a long loop runs before it gives way to the event loop (util/turns.ts).
   * Absent: it never does. A FakeClock's time moves only when a test moves it, so work done "now"
   * takes no time; a turn inside a round would let the test move time in the middle of it.
   */
  readonly turn_budget_ms?: number;
}

/** The process's clock and timers; timers do not keep the process alive (unref). */
export const systemClock: Clock = {
  now_ms: () => Date.now(),
  turn_budget_ms: 5,
  setTimeout: (callback, delay_ms) => setTimeout(callback, delay_ms).unref(),
  setInterval: (callback, period_ms) => setInterval(callback, period_ms).unref(),
  clear: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

interface FakeTimer {
  id: number;
  due_ms: number;
  period_ms: number | undefined;
  callback: () => void;
}

/**
 * A clock that moves only when told (`advance`): timers fire in due order, each followed by the
 * promise jobs it started, so async work triggered by a timer settles before the next one.
 */
export class FakeClock implements Clock {
  private time_ms: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  /** `turn_budget_ms`: for a test of the turns themselves (Clock.turn_budget_ms). */
  constructor(
    start_ms = 0,
    readonly turn_budget_ms?: number,
  ) {
    this.time_ms = start_ms;
  }

  now_ms(): number {
    return this.time_ms;
  }

  setTimeout(callback: () => void, delay_ms: number): TimerId {
    return this.add(callback, delay_ms, undefined);
  }

  setInterval(callback: () => void, period_ms: number): TimerId {
    return this.add(callback, period_ms, Math.max(1, period_ms));
  }

  clear(timer: TimerId): void {
    if (typeof timer === 'object' && timer !== null && 'id' in timer) this.timers.delete(timer.id);
  }

  /** Number of pending timers. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer due on the way (in due order, then creation order). */
  async advance(ms: number): Promise<void> {
    const end_ms = this.time_ms + ms;
    for (;;) {
      await settle();
      let next: FakeTimer | undefined;
      for (const t of this.timers.values()) if (t.due_ms <= end_ms && (!next || t.due_ms < next.due_ms)) next = t;
      if (!next) break;
      this.time_ms = Math.max(this.time_ms, next.due_ms);
      if (next.period_ms === undefined) this.timers.delete(next.id);
      else next.due_ms += next.period_ms;
      next.callback();
    }
    this.time_ms = end_ms;
    await settle();
  }

  /** Advances in steps of `step_ms` until `condition` holds; throws after `limit_ms` of fake time. */
  async until(condition: () => boolean | Promise<boolean>, limit_ms: number, step_ms = 100): Promise<void> {
    const end_ms = this.time_ms + limit_ms;
    while (!(await condition())) {
      if (this.time_ms >= end_ms) throw new Error(`condition not met within ${limit_ms} ms of fake time`);
      await this.advance(step_ms);
    }
  }

  private add(callback: () => void, delay_ms: number, period_ms: number | undefined): TimerId {
    const id = this.nextId++;
    this.timers.set(id, { id, due_ms: this.time_ms + Math.max(0, delay_ms), period_ms, callback });
    return { id };
  }
}

/** Lets pending promise jobs and immediates run (I/O such as SQLite calls resolves synchronously or via immediates). */
async function settle(): Promise<void> {
  for (let k = 0; k < 3; k++) await new Promise<void>((done) => setImmediate(done));
}
