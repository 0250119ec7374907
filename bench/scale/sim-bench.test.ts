import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scaledDay } from './sim-bench.js';

describe('scaledDay', () => {
  it('lays the Pollux workloads end to end over the hours and copies them, the same every time', () => {
    const day = scaledDay(2, 24);
    const again = scaledDay(2, 24);
    assert.deepEqual(
      day.jobs.map((j) => `${j.name}@${j.submit_s}`),
      again.jobs.map((j) => `${j.name}@${j.submit_s}`),
    );
    assert.ok(day.jobs.length > 2 * 3 * 150 && day.jobs.length <= 2 * 3 * 160, `${day.jobs.length} jobs`);
    assert.equal(new Set(day.jobs.map((j) => j.name)).size, day.jobs.length, 'names are unique');
    assert.ok(day.jobs.every((j, i) => j.submit_s < 24 * 3600 && (i === 0 || j.submit_s >= day.jobs[i - 1]!.submit_s)));
    assert.ok(day.jobs.at(-1)!.submit_s > 20 * 3600, 'the day is covered');
  });
});
