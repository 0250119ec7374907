import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addToProfile,
  configKey,
  emptyProfile,
  gradAt,
  inConfigOrder,
  measuredError,
  mergePoints,
  MIN_JUDGED_STEP_S,
  modelPoints,
  newConfigs,
} from './key-profile.js';
import { PERF_FIXTURE, perfPoint } from './testing/perf-fixture.js';
import { accumStepTime_s, optimStepTime_s } from './throughput.js';
import type { PerfParams, ProfilePoint } from './types.js';

const perf = PERF_FIXTURE;
const point = (num_nodes: number, num_replicas: number, local_bsz: number, scale = 1): ProfilePoint =>
  perfPoint({ num_nodes, num_replicas, local_bsz, scale });

test('addToProfile keeps one point per configuration, the newest, and counts jobs', () => {
  let p = addToProfile(
    emptyProfile('resnet', 'cpu'),
    [point(1, 1, 32), point(1, 4, 32)],
    [{ progress: 0, sqr: 1, var: 2 }],
    true,
  );
  p = addToProfile(p, [point(1, 4, 32, 2), point(2, 8, 32)], [{ progress: 0.5, sqr: 3, var: 4 }], true);
  assert.equal(p.jobs, 2);
  assert.equal(p.points.length, 3);
  assert.equal(p.max_measured_replicas, 8);
  assert.equal(p.points.find((q) => q.num_replicas === 4)!.accum_step_time_s, point(1, 4, 32, 2).accum_step_time_s);
  assert.deepEqual(
    p.grad.map((g) => g.progress),
    [0, 0.5],
  );
  const again = addToProfile(p, [], [{ progress: 0.5, sqr: 9, var: 9 }], false);
  assert.equal(again.jobs, 2, 'a report of a job already counted does not count it again');
  assert.equal(again.grad.find((g) => g.progress === 0.5)!.sqr, 9);
  assert.equal(p.grad.find((g) => g.progress === 0.5)!.sqr, 3, 'the input profile is unchanged');
});

test('mergePoints, modelPoints and newConfigs give what their rules by configuration key give', () => {
  // The merge by keys it replaced (one pass over an ordered base now), on random profiles and reports.
  const byKey = (base: readonly ProfilePoint[], added: readonly ProfilePoint[]): ProfilePoint[] => {
    const byConfig = new Map<string, ProfilePoint>();
    for (const p of [...base, ...added]) byConfig.set(configKey(p), p);
    return inConfigOrder([...byConfig.values()]);
  };
  let seed = 7;
  const random = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const point = (tag: number): ProfilePoint => ({
    num_nodes: 1 + random(3),
    num_replicas: 1 + random(4),
    local_bsz: [32, 64, 64.5, 128][random(4)]!,
    accum_step_time_s: tag,
    optim_step_time_s: tag,
  });
  for (let trial = 0; trial < 300; trial++) {
    const ordered = trial % 3 !== 0; // a profile's points, or (every third) any list: the slow path
    const raw = Array.from({ length: random(12) }, (_, k) => point(k));
    const base = ordered ? byKey([], raw) : raw;
    const added = Array.from({ length: random(5) }, (_, k) => point(100 + k));
    assert.deepEqual(mergePoints(base, added), byKey(base, added), `trial ${trial}`);
    // modelPoints: the job's own points, and the profile's where it has none of its own.
    const measured = new Set(added.map(configKey));
    const profile = { ...emptyProfile('k', 't'), points: base };
    const expected = inConfigOrder([...added, ...base.filter((p) => !measured.has(configKey(p)))]);
    assert.deepEqual(modelPoints(added, profile), expected, `modelPoints, trial ${trial}`);
    // newConfigs: the report's points at configurations the profile lacks, each once (the first).
    const known = new Set(base.map(configKey));
    const fresh = added.filter((p) => !known.has(configKey(p)) && (known.add(configKey(p)), true));
    assert.deepEqual(newConfigs(base, added), fresh, `newConfigs, trial ${trial}`);
  }
});

test('addToProfile keeps the latest reported parameter count', () => {
  const empty = emptyProfile('resnet', 'cpu');
  assert.equal(
    'model_parameters' in addToProfile(empty, [point(1, 1, 32)], [], true),
    false,
    'absent until a job reports it',
  );
  const reported = addToProfile(empty, [point(1, 1, 32)], [], true, 11_200_000);
  assert.equal(reported.model_parameters, 11_200_000);
  assert.equal(
    addToProfile(reported, [point(1, 2, 32)], [], false).model_parameters,
    11_200_000,
    'a report without it keeps it',
  );
  assert.equal(addToProfile(reported, [], [], true, 0).model_parameters, 11_200_000, 'a count <= 0 is not a count');
  assert.equal(
    addToProfile(reported, [], [], true, 25_600_000).model_parameters,
    25_600_000,
    'a newer count replaces it',
  );
});

test("modelPoints prefers the job's own measurement of a configuration", () => {
  const profile = addToProfile(emptyProfile('k', 'cpu'), [point(1, 1, 32), point(4, 16, 32)], [], true);
  const own = [point(1, 1, 32, 3)];
  const pts = modelPoints(own, profile);
  assert.equal(pts.length, 2);
  assert.equal(pts[0], own[0]);
  assert.equal(pts[1]!.num_replicas, 16);
  assert.deepEqual(modelPoints(own, undefined), own);
});

test('gradAt interpolates and holds the ends', () => {
  const p = addToProfile(
    emptyProfile('k', 'cpu'),
    [],
    [
      { progress: 0.2, sqr: 1, var: 10 },
      { progress: 0.6, sqr: 3, var: 30 },
    ],
    true,
  );
  assert.deepEqual(gradAt(p, 0), { sqr: 1, var: 10 });
  assert.deepEqual(gradAt(p, 0.4), { sqr: 2, var: 20 });
  assert.deepEqual(gradAt(p, 1), { sqr: 3, var: 30 });
  assert.equal(gradAt(emptyProfile('k', 'cpu'), 0.5), undefined);
});

test("measuredError anchors on the profile's measurement of the same shape", () => {
  // A model that is 30% off everywhere: judged by the fitted model alone, a job of the same model would be discarded.
  const off: PerfParams = { ...perf, alpha_c: perf.alpha_c * 1.3, beta_c: perf.beta_c * 1.3 };
  const profile = addToProfile(emptyProfile('k', 'cpu'), [point(1, 1, 32), point(2, 8, 32)], [], true);
  const same = [point(1, 1, 40), point(2, 8, 32)];
  assert.ok(
    Math.abs(accumStepTime_s(off, 40) - same[0]!.accum_step_time_s) / same[0]!.accum_step_time_s > 0.25,
    'the fitted model alone disagrees',
  );
  assert.ok(measuredError(off, profile, same) < 0.05, 'anchored on measurements, the same model agrees');
  assert.ok(measuredError(off, profile, [point(1, 1, 32, 2)]) > 0.45, 'a job twice as slow disagrees');
  assert.ok(measuredError(off, profile, [point(4, 16, 48)]) < 0.05, 'an unmeasured shape of the same model agrees');
  assert.ok(
    measuredError(off, profile, [point(4, 16, 32, 2)]) > 0.45,
    'an unmeasured shape is checked on its computation',
  );
  assert.equal(measuredError(off, profile, []), 0);
});

test('measuredError does not judge steps too short to time, and judges any step longer than that', () => {
  const fast: PerfParams = {
    alpha_c: 0.0005,
    beta_c: 0.00001,
    alpha_n: 0.001,
    beta_n: 0.0001,
    alpha_r: 0.0002,
    beta_r: 0.00001,
    gamma: 1.5,
  };
  const at = (scale: number, p = fast): ProfilePoint => perfPoint({ num_replicas: 1, local_bsz: 64, scale }, p);
  assert.ok(optimStepTime_s(fast, 1, 1, 64) * 2.2 < MIN_JUDGED_STEP_S, 'the fixture is a sub-millisecond step');
  const profile = addToProfile(emptyProfile('digits', 'cpu'), [at(2.2)], [], true);
  assert.equal(measuredError(fast, profile, [at(1)]), 0, 'identical jobs 2.2x apart in milliseconds: timing noise');
  const slow = addToProfile(
    emptyProfile('big', 'cpu'),
    [{ ...at(1), accum_step_time_s: 0.02, optim_step_time_s: 0.02 }],
    [],
    true,
  );
  assert.ok(measuredError(fast, slow, [at(1)]) > 1, 'a job of milliseconds against a profile of 20 ms steps is judged');
});
