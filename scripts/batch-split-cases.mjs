#!/usr/bin/env node
// Writes the shared cases of the batch-split rule from the compiled TypeScript function (npm run build first).
import { splitBatch, splitFixedBatch } from '../dist/src/goodput/batch-split.js';
const limitsSet = [
  { init_batch_size: 64, max_batch_size: 64, min_local_bsz: 1, max_local_bsz: 64, accumulation: false },
  { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 1, max_local_bsz: 16, accumulation: true },
  { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 1, max_local_bsz: 16, accumulation: false },
  { init_batch_size: 128, max_batch_size: 4096, min_local_bsz: 32, max_local_bsz: 1024, accumulation: true },
  { init_batch_size: 32, max_batch_size: 384, min_local_bsz: 8, max_local_bsz: 96, accumulation: true },
  { init_batch_size: 100, max_batch_size: 1000, min_local_bsz: 3, max_local_bsz: 7, accumulation: true },
];
const cases = [];
for (const limits of limitsSet) {
  for (const r of [1, 2, 3, 4, 7, 8, 16]) {
    for (const batch_size of [
      limits.init_batch_size,
      limits.init_batch_size + 1,
      100,
      255,
      256,
      1000,
      limits.max_batch_size,
      limits.max_batch_size + 5,
    ]) {
      cases.push({
        limits,
        batch_size,
        num_replicas: r,
        split: splitBatch(limits, batch_size, r),
        fixed: splitFixedBatch(limits, batch_size, r),
      });
    }
    // Fractional totals, as the optimizer's geometric candidates are.
    for (const batch_size of [limits.init_batch_size * 1.37, 137.38120335414712, 64.00000000001, 32 * r + 1e-9]) {
      cases.push({
        limits,
        batch_size,
        num_replicas: r,
        split: splitBatch(limits, batch_size, r),
        fixed: splitFixedBatch(limits, batch_size, r),
      });
    }
  }
}
process.stdout.write(
  JSON.stringify(
    {
      about:
        'Cases of the batch-split rule (src/goodput/batch-split.ts): splitBatch -> split, splitFixedBatch -> fixed. Checked by src/goodput/batch-split.test.ts; the split half also by python/tests/test_batch_split_cases.py. Regenerate: node scripts/batch-split-cases.mjs > fixtures/batch-split/cases.json',
      cases,
    },
    null,
    0,
  ).replace(/\},\{"limits"/g, '},\n{"limits"') + '\n',
);
