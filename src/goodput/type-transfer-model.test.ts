import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { correctedThroughput } from './step-correction.js';
import { transferredPerf } from './type-transfer-model.js';
import type { ProfilePoint } from './types.js';

const SHAPES = [
  { num_nodes: 1, num_replicas: 1 },
  { num_nodes: 1, num_replicas: 2 },
  { num_nodes: 1, num_replicas: 4 },
  { num_nodes: 2, num_replicas: 8 },
];
const BATCHES = [8, 16, 32];

/** A key's points on a type: compute at `speed` plus `size` x the type's network time of the shape (steps add up). */
function points(
  speed: number,
  size: number,
  network: (n: number, r: number) => number,
  perSample: number,
): ProfilePoint[] {
  return SHAPES.flatMap((s) =>
    BATCHES.map((b) => {
      const compute = (0.02 + perSample * b) / speed;
      const sync = s.num_replicas > 1 ? size * network(s.num_nodes, s.num_replicas) : 0;
      return { ...s, local_bsz: b, accum_step_time_s: compute, optim_step_time_s: compute + sync };
    }),
  );
}

/** The reference type: slow GPUs on a slow network; the target: 3x the compute on a 20x faster network. */
const slowNet = (n: number, r: number) => (n > 1 ? 0.2 + 0.01 * r : 0.02 * r);
const fastNet = (n: number, r: number) => (n > 1 ? 0.01 + 0.0005 * r : 0.001 * r);
const KEYS = [0.3, 0.6, 1, 1.5].map((size, i) => ({ size, perSample: 0.002 * (i + 1) }));

const throughputOf = (p: ProfilePoint) => (p.num_replicas * p.local_bsz) / p.optim_step_time_s;

describe('a model transferred to a type its key has not run on', () => {
  const job = { size: 0.8, perSample: 0.003 };
  const reference = points(1, job.size, slowNet, job.perSample);
  const truth = points(3, job.size, fastNet, job.perSample);
  const others = KEYS.map((k) => ({
    reference: points(1, k.size, slowNet, k.perSample),
    target: points(3, k.size, fastNet, k.perSample),
  }));
  const oneGpu = truth.filter((p) => p.num_replicas === 1);
  const at = reference;

  it('predicts the multi-GPU throughput there from the other keys, where the one-GPU ratio rule carries the slow network over', () => {
    const t = transferredPerf(reference, oneGpu, others, at);
    assert.ok(t);
    assert.equal(t.num_keys, KEYS.length);
    const ratioErrors: number[] = [];
    for (const m of truth.filter((p) => p.num_replicas > 1)) {
      const predicted = correctedThroughput(t.perf, t.correction, m.num_nodes, m.num_replicas, m.local_bsz, 0);
      const ratioRule =
        3 *
        throughputOf(
          reference.find(
            (p) => p.num_nodes === m.num_nodes && p.num_replicas === m.num_replicas && p.local_bsz === m.local_bsz,
          )!,
        );
      const error = Math.abs(predicted / throughputOf(m) - 1);
      ratioErrors.push(Math.abs(ratioRule / throughputOf(m) - 1));
      assert.ok(error < 0.05, `${m.num_nodes}x${m.num_replicas} b${m.local_bsz}: transferred ${error}`);
    }
    ratioErrors.sort((a, b) => a - b);
    assert.ok(
      ratioErrors[ratioErrors.length >> 1]! > 0.3,
      `ratio rule median error ${ratioErrors[ratioErrors.length >> 1]}`,
    );
  });

  it('keeps the one-GPU points measured on the target', () => {
    const t = transferredPerf(reference, oneGpu, others, at)!;
    for (const one of oneGpu) {
      const predicted = correctedThroughput(t.perf, t.correction, 1, 1, one.local_bsz, 0);
      assert.ok(
        Math.abs(predicted / throughputOf(one) - 1) < 0.02,
        `b${one.local_bsz}: ${predicted} vs ${throughputOf(one)}`,
      );
    }
  });

  it('is undefined without another key measured several GPUs on the target, or without one-GPU points', () => {
    assert.equal(transferredPerf(reference, oneGpu, [], at), undefined);
    const oneGpuOthers = others.map((o) => ({
      reference: o.reference,
      target: o.target.filter((p) => p.num_replicas === 1),
    }));
    assert.equal(transferredPerf(reference, oneGpu, oneGpuOthers, at), undefined);
    assert.equal(transferredPerf(reference, [], others, at), undefined);
    assert.equal(
      transferredPerf(
        reference.filter((p) => p.num_replicas > 1),
        oneGpu,
        others,
        at,
      ),
      undefined,
    );
  });
});
