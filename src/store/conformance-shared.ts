/**
 * What the parts of the Store conformance suite share: a job spec, an error-code matcher and the
 * check of a value that only some report entries carry.
 */
import assert from 'node:assert/strict';
import { GoodputError } from '../core/errors.js';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';
import { reportBatch } from './report-batch.js';
import type { Store } from './store.js';
import type { JobRecord, JobSpec } from './types.js';

/** The spec of the suite's jobs (a few tests compare it back or go past its limits). */
export const conformanceSpec: JobSpec = {
  name: 'mnist',
  command: ['python', 'train.py', '--lr', '0.1'],
  workdir: '/tmp',
  env: { A: '1' },
  min_replicas: 0,
  max_replicas: 4,
  max_restarts: 2,
  preemptible: true,
  priority: 0,
};

/** An `assert.rejects` matcher: a GoodputError with this code. */
export function isCode(code: string): (error: unknown) => boolean {
  return (error: unknown) => error instanceof GoodputError && error.code === code;
}

/** A job's value that only some report entries carry; the job keeps the newest one reported. */
export type NewestReported = 'remaining_samples' | 'model_parameters';

/**
 * Checks the rule of a value only some entries carry on job `created` (id 'j', just created):
 * unknown (null) until reported, left unknown by entries without it, then, of one batch of
 * entries with `values` (undefined: an entry without it), the newest entry that has it wins
 * (`newest`), and is persisted.
 */
export async function assertNewestReported(
  s: Store,
  created: JobRecord,
  field: NewestReported,
  values: readonly (number | null | undefined)[],
  newest: number,
): Promise<void> {
  assert.equal(created[field], null, 'unknown until reported');
  const m = measuredStepFixture({ time_s: 1 });
  let added = await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 1 }]));
  assert.equal(added.job[field], null, 'entries without it leave it unknown');
  const entries = values.map((v, i) => ({ ...m, step: 2 + i, ...(v === undefined ? {} : { [field]: v }) }));
  added = await s.addReports(reportBatch('j', 0, undefined, entries));
  assert.equal(added.job[field], newest, 'newest entry that has it');
  assert.equal((await s.getJob('j'))![field], newest, 'persisted');
}
