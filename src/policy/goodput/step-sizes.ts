/**
 * Step sizes worth evaluating from `replicas`: every size up to `room`, then whole-node totals
 * spaced by about `spacing` x up to `far`, and `far` itself. The far sizes let a job jump over a
 * dip in its speedup curve (a fitted model often predicts 2 nodes slower than 1 but 4 nodes much
 * faster) at a cost logarithmic in the cluster size. Ascending; from `replicas` 0 they are totals.
 */
export function candidateSteps(
  replicas: number,
  room: number,
  far: number,
  node_gpus: number,
  spacing = 1.5,
): number[] {
  const list = new StepList();
  list.fill(replicas, room, far, node_gpus, spacing);
  return Array.from(list.steps.subarray(0, list.count));
}

/**
 * candidateSteps' steps in a reusable buffer: the sizing asks for the steps of every job several
 * times a round (tens of thousands of calls at 5,000 jobs, issue #49), and an array per call
 * was a tenth of the round with its garbage. `fill` writes `count` steps into `steps`.
 */
export class StepList {
  steps = new Int32Array(64);
  count = 0;

  /** Writes the steps of (replicas, room, far, node_gpus, spacing), as candidateSteps describes them. */
  fill(replicas: number, room: number, far: number, node_gpus: number, spacing = 1.5): void {
    // Room for every step: `room` small ones, then far ones at least node_gpus apart (ceil).
    const most = Math.max(0, room) + Math.ceil(Math.max(0, far) / node_gpus) + 2;
    if (this.steps.length < most) this.steps = new Int32Array(2 * most);
    // Written without a call per step: this runs before the JIT has compiled it (first round).
    const steps = this.steps;
    let count = 0;
    for (let k = 1; k <= room; k++) steps[count++] = k;
    let total = Math.ceil((replicas + room + 1) / node_gpus) * node_gpus;
    while (total - replicas <= far) {
      steps[count++] = total - replicas;
      total = Math.max(total + node_gpus, Math.ceil((total * spacing) / node_gpus) * node_gpus);
    }
    if (far > room && (count === 0 || steps[count - 1] !== far)) steps[count++] = far;
    this.count = count;
  }
}
