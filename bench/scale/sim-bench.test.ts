import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runSimBench, scaledDay } from './sim-bench.js';

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

describe('runSimBench', () => {
  it('says what it simulates, then how far it has got while it runs', () => {
    const lines: string[] = [];
    const figures = runSimBench({
      gpus: 64,
      hours: 1,
      policy: 'fifo',
      limit_s: 60,
      log: (l) => lines.push(l),
      progress_every_s: 0,
    });
    assert.match(lines[0]!, /^sim: \d+ jobs on 64 GPUs, policy fifo, stopped after 60 s$/);
    const rounds = lines.slice(1);
    assert.equal(rounds.length, figures.rounds, 'a line per round when every 0 s');
    assert.match(rounds.at(-1)!, /^sim: \d+ s wall, [\d.]+ of 1 simulated hours, \d+ of \d+ jobs completed$/);
  });
});
