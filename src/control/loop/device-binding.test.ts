import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobRecordFixture, jobSpecFixture } from '../../store/job-fixture.js';
import type { JobRecord, JobState } from '../../store/types.js';
import { assignDevices, sameAllocation } from './device-binding.js';
import { buildSnapshot, defaultLimits } from './snapshot.js';

/** Fluent-ish builder of stored jobs for table-driven tests. */
function job(id: string, state: JobState, devices: number[] = [], extra: Partial<JobRecord> = {}): JobRecord {
  return jobRecordFixture({
    ...{ id, name: id, state, devices, allocation: devices.map(() => 0) },
    spec: jobSpecFixture({ name: id, command: ['x'], workdir: '/', max_replicas: 4, max_restarts: 1 }),
    ...{ submitted_at_ms: 1000, started_at_ms: null, launches: 0, launched_at_ms: null, last_report_at_ms: null },
    ...{ max_profiled_replicas: 0, limits: null, perf: null, grad: null, step: 0, samples: 0 },
    ...extra,
  });
}

describe('assignDevices', () => {
  const cases: {
    name: string;
    jobs: JobRecord[];
    alloc: Record<string, number[]>;
    want: Record<string, number[]> | string;
  }[] = [
    {
      name: 'new jobs fill devices in index order',
      jobs: [job('a', 'queued'), job('b', 'queued')],
      alloc: { a: [0, 0], b: [0] },
      want: { a: [0, 1], b: [2] },
    },
    {
      name: 'a shrinking job keeps a prefix of its devices; a grower takes the freed ones',
      jobs: [job('a', 'running', [2, 3, 0, 1]), job('b', 'queued')],
      alloc: { a: [0, 0], b: [0, 0] },
      want: { a: [2, 3], b: [0, 1] },
    },
    {
      name: 'a growing job keeps its devices and adds free ones',
      jobs: [job('a', 'running', [3]), job('b', 'running', [0])],
      alloc: { a: [0, 0, 0], b: [0] },
      want: { a: [3, 1, 2], b: [0] },
    },
    {
      name: 'queued jobs do not hold devices',
      jobs: [job('a', 'preempted', [0]), job('b', 'running', [1])],
      alloc: { a: [0], b: [0] },
      want: { a: [0], b: [1] },
    },
    {
      name: 'over-commit is refused',
      jobs: [job('a', 'queued'), job('b', 'queued')],
      alloc: { a: [0, 0, 0], b: [0, 0] },
      want: 'node 0 over-committed (5 > 4 GPUs)',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = assignDevices(c.jobs, c.alloc, [[0, 1, 2, 3]]);
      if (typeof c.want === 'string') {
        assert.deepEqual(got, { ok: false, reason: c.want });
      } else {
        assert.ok(got.ok);
        assert.deepEqual(Object.fromEntries(got.devices), c.want);
      }
    });
  }
  it('places replicas per node: keeps held devices on the same node, fills free ones there', () => {
    const a = job('a', 'running', [1, 2], { allocation: [1, 1] });
    const got = assignDevices([a, job('b', 'queued')], { a: [0, 1, 1], b: [1, 0] }, [
      [0, 1],
      [0, 1, 2, 3],
    ]);
    assert.ok(got.ok);
    assert.deepEqual(Object.fromEntries(got.devices), { a: [0, 1, 2], b: [0, 1] });
    assert.deepEqual(assignDevices([job('c', 'queued')], { c: [1, 1, 1] }, [[0], [0, 1]]), {
      ok: false,
      reason: 'node 1 over-committed (3 > 2 GPUs)',
    });
  });
  it('never hands one device to two replicas, even where a stored job names it twice', () => {
    const a = job('a', 'running', [1, 1], { allocation: [0, 0] });
    const got = assignDevices([a], { a: [0, 0] }, [[0, 1, 2]]);
    assert.ok(got.ok);
    assert.deepEqual(got.devices.get('a'), [1, 0]);
  });
  it('compares allocations by value and order', () => {
    assert.equal(sameAllocation([0, 0], [0, 0]), true);
    assert.equal(sameAllocation([0, 1], [1, 0]), false);
    assert.equal(sameAllocation([], [0]), false);
  });
});

describe('buildSnapshot', () => {
  it('turns stored jobs into policy jobs with allocations in force and running service', async () => {
    const running = job('a', 'running', [0, 1], {
      launches: 3,
      attained_service_gpu_s: 10,
      launched_at_ms: 5000,
      max_profiled_replicas: 2,
      grad: { sqr: 1, var: 2 },
      perf: { alpha_c: 0.1, beta_c: 0.01, alpha_n: 1e-8, beta_n: 1e-8, alpha_r: 1e-8, beta_r: 1e-8, gamma: 1 },
    });
    const queued = job('b', 'queued', [], { spec: { ...running.spec, fixed_batch_size: 256, min_replicas: 1 } });
    const s = await buildSnapshot([{ index: 0, name: 'local', gpus: 4, preemptible: false }], [running, queued], 9000);
    assert.equal(s.now_s, 9);
    assert.deepEqual(s.allocations, { a: [0, 0] });
    const [a, b] = s.jobs;
    assert.equal(a!.attained_service_gpu_s, 10 + 2 * 4, 'stored service plus the running attempt');
    assert.equal(a!.restarts, 2);
    assert.equal(a!.max_profiled_replicas, 2);
    assert.ok(a!.model, 'model once perf and grad are known');
    assert.equal(b!.model, undefined);
    assert.equal(b!.fixed_batch_size, 256);
    assert.equal(b!.min_replicas, 1);
    assert.deepEqual(b!.limits, defaultLimits(queued.spec));
    assert.equal(b!.limits.init_batch_size, 256);
  });
});
