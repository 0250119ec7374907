/**
 * Lets a long loop on the event loop give way: `pause()` resolves at once until `budget_ms` of
 * wall time has passed since the loop started or last gave way, then after one turn of the event
 * loop (setImmediate), so requests waiting on the server are served between the loop's steps. A
 * round at 16,384 GPUs assigns and launches thousands of jobs with synchronous store writes: the
 * first one held the event loop for 2.4 s and every report that arrived meanwhile waited for it
 * (issue #49). A loop shorter than the budget never gives way, so small clusters run as before.
 * The controller's budget is its clock's (5 ms on the system clock; none on a FakeClock, see
 * util/clock.ts): a report needs several turns of the event loop (its request, its body, the
 * store's group commit, its answer), each of which may wait one budget behind a round; with 20 ms
 * the report p99 of bench:scale was 112 ms, with 5 ms 67-94 ms.
 */
export class Turns {
  private last_ms = performance.now();

  constructor(private readonly budget_ms: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.last_ms < this.budget_ms) return;
    await new Promise<void>((done) => setImmediate(done));
    this.last_ms = performance.now();
  }
}
