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
  const steps: number[] = [];
  for (let k = 1; k <= room; k++) steps.push(k);
  let total = Math.ceil((replicas + room + 1) / node_gpus) * node_gpus;
  while (total - replicas <= far) {
    steps.push(total - replicas);
    total = Math.max(total + node_gpus, Math.ceil((total * spacing) / node_gpus) * node_gpus);
  }
  if (far > room && steps[steps.length - 1] !== far) steps.push(far);
  return steps;
}
