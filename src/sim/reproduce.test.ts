import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { findPolicy } from '../policy/registry.js';
import { packagePath } from '../util/package-root.js';
import { simulate } from './simulator.js';
import { loadWorkload } from './workload.js';

interface Published {
  jobload: Record<string, { avg_jct_s: Record<string, number>; job_jct_s: Record<string, Record<string, number>> }>;
}

const published = JSON.parse(
  readFileSync(packagePath('data', 'pollux', 'published-results.json'), 'utf8'),
) as Published;

// The artifact's Tiresias and Optimus are deterministic: every job's JCT must match to the second.
for (const policy of ['tiresias', 'optimus']) {
  describe(`${policy} reproduces the Pollux artifact (load 1.0)`, () => {
    for (const k of [1, 2, 3, 4]) {
      it(`workload-${k}: every job's JCT to the second`, () => {
        const workload = loadWorkload(packagePath('data', 'pollux', 'workloads', `workload-${k}.csv`));
        const result = simulate(workload, policy, findPolicy(policy)!.create({ seed: 0 }));
        const expected = published.jobload[`${policy}-1.0`]!.job_jct_s[`workload-${k}`]!;
        const actual = Object.fromEntries(result.jobs.map((j) => [j.name, j.jct_s]));
        assert.equal(result.jobs.length, Object.keys(expected).length);
        assert.deepEqual(actual, expected);
        const avg = result.jobs.reduce((s, j) => s + j.jct_s, 0) / result.jobs.length;
        assert.equal(avg, published.jobload[`${policy}-1.0`]!.avg_jct_s[`workload-${k}`]);
      });
    }
  });
}
