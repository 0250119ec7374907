import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Random } from '../../core/random.js';
import type { Allocation } from '../../core/cluster.js';
import type { TypeGroup } from '../typed.js';
import { placeSticky } from './placement.js';

/** A random group (nodes at odd indices, other types' nodes between) with jobs and holdings. */
function randomCase(random: Random) {
  const nodeCount = 2 + Math.floor(random.next() * 6);
  const g = random.next() < 0.5 ? 4 : 8;
  const nodes = Array.from({ length: nodeCount }, (_, i) => 2 * i + 1);
  const nodeGpus = Array.from({ length: 2 * nodeCount + 2 }, () => g);
  const group: TypeGroup = { type: 'x', nodes, gpus_per_node: g, total_gpus: nodeCount * g };
  const jobs: { id: string; gpus: number }[] = [];
  const current: Record<string, Allocation> = {};
  for (let j = 0; j < 6; j++) {
    const gpus = [1, 2, 3, g, 2 * g][Math.floor(random.next() * 5)]!;
    jobs.push({ id: `j${j}`, gpus });
    if (random.next() < 0.6) {
      const held = random.next() < 0.7 ? gpus : 1 + Math.floor(random.next() * 3);
      current[`j${j}`] = Array.from({ length: held }, () => nodes[Math.floor(random.next() * nodeCount)]!);
    }
  }
  return { group, nodeGpus, jobs, current };
}

test('placeSticky: nodes never over-committed, each placed job gets its GPUs on the group, and a job is left out only when fewer GPUs are free than it needs', () => {
  const random = new Random(11);
  for (let t = 0; t < 3000; t++) {
    const { group, nodeGpus, jobs, current } = randomCase(random);
    const out = placeSticky(group, jobs, nodeGpus, current);
    const used = new Map<number, number>();
    for (const job of jobs) {
      const a = out[job.id];
      if (!a) continue;
      assert.equal(a.length, job.gpus, `case ${t}: ${job.id} got ${a.length} GPUs`);
      for (const n of a) {
        assert.ok(group.nodes.includes(n), `case ${t}: node ${n} is not of the group`);
        used.set(n, (used.get(n) ?? 0) + 1);
      }
    }
    let free = 0;
    for (const n of group.nodes) {
      assert.ok((used.get(n) ?? 0) <= nodeGpus[n]!, `case ${t}: node ${n} over-committed`);
      free += nodeGpus[n]! - (used.get(n) ?? 0);
    }
    for (const job of jobs)
      if (!out[job.id]) assert.ok(job.gpus > free, `case ${t}: ${job.id} (${job.gpus}) left out with ${free} free`);
  }
});

test('placeSticky keeps a job whose count is unchanged on the nodes it holds, and best-fits a new one', () => {
  const group: TypeGroup = { type: 'x', nodes: [0, 1, 2], gpus_per_node: 4, total_gpus: 12 };
  const out = placeSticky(
    group,
    [
      { id: 'kept', gpus: 2 },
      { id: 'new', gpus: 2 },
    ],
    [4, 4, 4],
    { kept: [1, 1] },
  );
  assert.deepEqual(out.kept, [1, 1]);
  // Node 1 has 2 free: the tightest fit.
  assert.deepEqual(out.new, [1, 1]);
});
