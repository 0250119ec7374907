import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStepBreakdown } from '../parse/step-breakdown.js';
import { stepBreakdownFindings } from './step-findings.js';

/** Per-rank step logs (merged): 3 ranks x 20 steps; `slow` adds 150 ms to one phase of rank 2. */
function logs(slow: 'data_wait_s' | 'forward_backward_s' | 'between_steps_s' | null) {
  const steps = [];
  for (let step = 0; step < 20; step++)
    for (let rank = 0; rank < 3; rank++) {
      const extra = (k: string) => (rank === 2 && slow === k ? 0.15 : 0);
      const own = 0.05 + (slow ? 0.15 : 0);
      steps.push({
        rank,
        step,
        data_wait_s: 0.005 + extra('data_wait_s'),
        forward_backward_s: 0.04 + extra('forward_backward_s'),
        // every rank's step lasts the slowest's: the others wait the difference in sync
        sync_s: 0.01 + own - (rank === 2 ? own : 0.05),
        optimizer_s: 0.003,
        between_steps_s: 0.002 + extra('between_steps_s'),
      });
    }
  return parseStepBreakdown({ kind: 'goodput.step_breakdown', steps });
}

describe('straggler from per-rank step logs (goodput doctor on files)', () => {
  it('names the rank, its slow phase and the cost, as the live verdict does', () => {
    const cases = [
      ['data_wait_s', 'data'],
      ['forward_backward_s', 'compute'],
      ['between_steps_s', 'time between steps'],
    ] as const;
    for (const [field, phase] of cases) {
      const f = stepBreakdownFindings(logs(field), 's').find((x) => x.id === 'steps.straggler-rank');
      assert.ok(f, field);
      assert.match(
        f.title,
        new RegExp(`^Rank 2 is a straggler: .* in ${phase}; .* the job runs \\d+(\\.\\d)?% slower`),
      );
    }
  });

  it('no straggler when the ranks are alike', () => {
    assert.ok(!stepBreakdownFindings(logs(null), 's').some((x) => x.id === 'steps.straggler-rank'));
  });
});
