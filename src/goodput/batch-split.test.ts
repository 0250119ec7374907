import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { packagePath } from '../util/package-root.js';
import { capLocalBatch, splitBatch, splitFixedBatch, type LocalBatch } from './batch-split.js';
import type { BatchLimits } from './types.js';
import { ACCUMULATING_LIMITS } from './testing/perf-fixture.js';

interface SplitCase {
  limits: BatchLimits;
  batch_size: number;
  num_replicas: number;
  split: LocalBatch;
  fixed: LocalBatch;
}

test('the shared cases (also checked by the Python SDK) match the rule', () => {
  const { cases } = JSON.parse(readFileSync(packagePath('fixtures', 'batch-split', 'cases.json'), 'utf8')) as {
    cases: SplitCase[];
  };
  assert.ok(cases.length > 100);
  for (const c of cases) {
    assert.deepEqual(splitBatch(c.limits, c.batch_size, c.num_replicas), c.split, JSON.stringify(c));
    assert.deepEqual(splitFixedBatch(c.limits, c.batch_size, c.num_replicas), c.fixed, JSON.stringify(c));
  }
});

const limits = ACCUMULATING_LIMITS;

test('splitBatch: fewest micro-steps within max_local_bsz, two on one replica above B0', () => {
  assert.deepEqual(splitBatch(limits, 256, 2), { local_bsz: 16, accum_steps: 7 });
  assert.deepEqual(splitBatch({ ...limits, max_local_bsz: 512 }, 256, 1), { local_bsz: 128, accum_steps: 1 });
  assert.deepEqual(splitBatch({ ...limits, max_local_bsz: 512 }, 64, 1), { local_bsz: 64, accum_steps: 0 });
  assert.deepEqual(splitBatch({ ...limits, max_local_bsz: 512 }, 64, 1, true), { local_bsz: 32, accum_steps: 1 });
  // A share that is whole up to float error does not round up.
  assert.deepEqual(splitBatch({ ...limits, max_local_bsz: 512 }, 96.00000000001, 3), { local_bsz: 32, accum_steps: 0 });
});

test('capLocalBatch: max_batch_size always, max_local_bsz without accumulation', () => {
  const off: BatchLimits = { ...limits, accumulation: false };
  assert.deepEqual(splitFixedBatch(off, 256, 2), { local_bsz: 16, accum_steps: 0 });
  assert.deepEqual(splitFixedBatch({ ...off, max_batch_size: 64, max_local_bsz: 64 }, 64, 3), {
    local_bsz: 21,
    accum_steps: 0,
  });
  assert.deepEqual(capLocalBatch(limits, { local_bsz: 600, accum_steps: 0 }, 2), { local_bsz: 512, accum_steps: 0 });
});
