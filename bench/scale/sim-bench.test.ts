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
  it("shows how far it has got on the CLI's progress bar, a line per round when every 0 s", () => {
    const lines: string[] = [];
    const sink = { isTTY: false, write: (text: string) => lines.push(text) };
    const figures = runSimBench({
      gpus: 64,
      hours: 1,
      policy: 'fifo',
      limit_s: 60,
      progress: sink,
      progress_every_s: 0,
    });
    const rounds = lines.slice(0, -1);
    assert.equal(rounds.length, figures.rounds);
    assert.match(rounds[0]!, /^sim, \d+ jobs on 64 GPUs: \d+% \(t=\d+ min, \d+\/\d+ jobs\) after \d+ s\n$/);
    assert.match(lines.at(-1)!, /^sim, \d+ jobs on 64 GPUs: done after \d+ s\n$/);
  });
});
