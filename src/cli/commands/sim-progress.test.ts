import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProgressBar } from './sim-progress.js';

const step = (index: number, done: boolean) => ({
  index,
  now_s: 600,
  last_arrival_s: 1200,
  completed: 5,
  total: 10,
  done,
});

describe('progress of long commands', () => {
  it('prints a plain line every few seconds when stderr is not a terminal, and a last line', () => {
    const lines: string[] = [];
    let now = 0;
    const bar = new ProgressBar('compare', 2, { isTTY: false, write: (s) => lines.push(s) }, () => now, 5000);
    bar.update(step(0, false));
    now = 4000;
    bar.update(step(0, false));
    assert.equal(lines.length, 0, 'nothing during the first interval: quick runs stay quiet');
    now = 6000;
    bar.update(step(1, true));
    now = 7000;
    bar.finish();
    assert.deepEqual(lines, ['compare: 75% (1/2 runs) after 6 s\n', 'compare: done after 7 s\n']);
    assert.ok(
      lines.every((l) => !l.includes('\r') && !l.includes('\u001b')),
      'no control characters in logs',
    );
  });

  it('redraws one bar in place on a terminal', () => {
    const out: string[] = [];
    const bar = new ProgressBar('sim', 1, { isTTY: true, write: (s) => out.push(s) }, () => 0);
    bar.update(step(0, true));
    bar.finish();
    assert.equal(out[0], `\rsim [${'#'.repeat(30)}] 100% t=10 min, 5/10 jobs\u001b[K`);
    assert.equal(out[1], '\r\u001b[K');
  });
});
