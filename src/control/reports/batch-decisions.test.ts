import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goodputOf, optimizeBatch } from '../../goodput/optimize.js';
import type { JobRecord } from '../../store/types.js';
import { BATCH_MIN_GAIN, configFor } from './batch-config.js';
import { DIGITS_PERF, digitsJob, digitsStep } from './testing/digits-fixture.js';
import { BatchDecisions, batchChange } from './batch-decisions.js';
import { modelOf } from '../loop/snapshot.js';

const measured = digitsStep;
const perf = DIGITS_PERF;
const digits = digitsJob;

/**
 * Refits of a one-replica job's model as its reports come in: each moves the compute cost a
 * little (as noisy CPU step times do), and the best batch jumps between two sizes whose
 * predicted goodputs differ by less than the model's error.
 */
function refits(): JobRecord[] {
  const base = digits();
  const best = (j: JobRecord) => optimizeBatch(modelOf(j)!, 1, 1, 512, true);
  const first = best(base);
  for (let k = 1; k <= 40; k++) {
    const other = digits({ perf: { ...perf, beta_c: perf.beta_c * (1 + 0.01 * k) } });
    const choice = best(other);
    if (choice.local_bsz !== first.local_bsz || choice.accum_steps !== first.accum_steps) return [base, other];
  }
  throw new Error('no refit within 40% moves the best batch: the scenario does not flap');
}

describe('BatchDecisions: batch sizes that hold still', () => {
  it('does not flap when refits move the best batch for a gain below BATCH_MIN_GAIN', () => {
    const [a, b] = refits() as [JobRecord, JobRecord];
    const ca = configFor(a, measured(32, 1, 1));
    const cb = configFor(b, measured(32, 1, 1));
    assert.notEqual(
      ca.batch_size,
      cb.batch_size,
      'told the best batch each time, the job would flap between these two',
    );
    const gain =
      goodputOf(modelOf(b)!, 1, 1, cb.local_bsz, cb.accum_steps) /
      goodputOf(modelOf(b)!, 1, 1, ca.local_bsz, ca.accum_steps);
    assert.ok(gain < 1 + BATCH_MIN_GAIN, `the move gains ${gain}`);

    const d = new BatchDecisions(0);
    let latest = measured(32, 1, 1);
    const events: string[] = [];
    const told: number[] = [];
    for (let report = 0; report < 20; report++) {
      const { config, change } = d.decide(report % 2 === 0 ? a : b, 0, latest, report * 1000);
      told.push(config.batch_size);
      if (change) events.push(change.reason);
      // The job applies an answer one report later: the report after next shows it.
      if (report % 2 === 1) latest = measured(config.local_bsz, config.accum_steps, 1);
    }
    assert.equal(events.length, 1, `one decision from the initial batch, then it holds:\n${events.join('\n')}`);
    assert.equal(new Set(told.slice(1)).size, 1, `told ${told.join(' ')}`);
  });

  it('changes the batch in force for a gain of at least BATCH_MIN_GAIN, saying relative to what', () => {
    const j = digits();
    const d = new BatchDecisions(0);
    const { config, change } = d.decide(j, 0, measured(32, 1, 1), 0);
    assert.ok(change, 'from 64 the best batch gains more than 5%');
    const model = modelOf(j)!;
    const ratio = goodputOf(model, 1, 1, config.local_bsz, config.accum_steps) / goodputOf(model, 1, 1, 32, 1);
    assert.ok(ratio >= 1 + BATCH_MIN_GAIN);
    assert.match(
      change.reason,
      new RegExp(
        `^batch size grew 64 -> ${config.batch_size} \\(\\d+ x \\d+ x 1, local x accumulation x replicas\\), learning rate x${config.lr_scale.toFixed(2)} \\(AdaScale\\): predicted goodput x${ratio.toFixed(2)} relative to batch 64 \\(32 x 2 x 1\\) in force, statistical efficiency 0\\.\\d\\d$`,
      ),
    );
    assert.deepEqual(change.data.from, { local_bsz: 32, accum_steps: 1, replicas: 1, total: 64 });
    assert.equal(change.data.lr_scale, config.lr_scale);
  });

  it('takes the first change of an attempt at once, and undoes it only for a gain that persists for confirm_ms, as refits swing both ways', () => {
    // Refits every 5 s alternate between a model that wants a batch of 64 and one that wants 322
    // (each by more than BATCH_MIN_GAIN), as noisy step times on shared CPUs make them do.
    const small = digits({ grad: { sqr: 1, var: 4 } });
    const large = digits({ grad: { sqr: 1, var: 40 } });
    assert.equal(configFor(small, measured(161, 1, 1)).batch_size, 64);
    assert.equal(configFor(large, measured(32, 1, 1)).batch_size, 322);
    const d = new BatchDecisions(15_000);
    let latest = measured(64, 0, 1);
    const changes: number[] = [];
    for (let t_ms = 0; t_ms < 60_000; t_ms += 500) {
      const model = Math.floor(t_ms / 5000) % 2 === 0 ? large : small;
      const { config, change } = d.decide(model, 0, latest, t_ms);
      if (change) changes.push(t_ms);
      latest = measured(config.local_bsz, config.accum_steps, 1);
    }
    assert.deepEqual(changes, [0], 'the first move from the starting batch at once; no swing back lasted 15 s');
    // A gain that persists (the gradient noise fell: a smaller batch is efficient now) is acted
    // on once it has for 15 s (since 55 s, where the last swing to the small model began).
    const persisted: number[] = [];
    for (let t_ms = 60_000; t_ms < 100_000; t_ms += 500) {
      const { config, change } = d.decide(small, 0, latest, t_ms);
      if (change) persisted.push(t_ms);
      latest = measured(config.local_bsz, config.accum_steps, 1);
    }
    assert.deepEqual(persisted, [70_000]);
  });

  it('changes a configuration beyond the cap at once, whatever the confirmation time', () => {
    const d = new BatchDecisions(60_000);
    const { config, change } = d.decide(digits(), 0, measured(171, 0, 3), 0);
    assert.ok(change && config.batch_size <= 512, `${config.batch_size}`);
    assert.match(
      change.reason,
      /: batch 513 in force is above the job's cap 512, predicted goodput x[\d.]+ relative to batch 513 \(171 x 1 x 3\) in force/,
    );
  });

  it("takes each event's from as the configuration in force, not the stale report", () => {
    const d = new BatchDecisions(0);
    const j = digits();
    const first = d.decide(j, 0, measured(32, 1, 1), 0);
    // Once the job has measured it, a refit with less gradient noise makes a much smaller batch best.
    const later = digits({ grad: { sqr: 1, var: 4 } });
    const second = d.decide(later, 0, measured(first.config.local_bsz, first.config.accum_steps, 1), 1000);
    assert.ok(second.change, 'a second decision');
    assert.equal(
      second.change.data.from.total,
      first.config.batch_size,
      'from = the batch told last, which the job runs',
    );
    // A new attempt or replica count starts from what the job measured.
    const restarted = d.decide(later, 1, measured(20, 0, 2), 2000);
    assert.equal(restarted.change?.data.from.total ?? 40, 40);
  });

  it('never tells a batch above the job cap: the micro-batch rounds down where rounding up would pass it', () => {
    for (const replicas of [1, 2, 3, 5, 6, 7]) {
      // Noisy gradients: the best batch is the largest allowed.
      const big = digits({ allocation: Array(replicas).fill(0), grad: { sqr: 1, var: 1e5 } });
      const c = configFor(big, measured(8, 0, replicas));
      assert.ok(c.batch_size <= 512, `${replicas} replicas: ${c.batch_size}`);
      assert.ok(
        c.batch_size > 512 - replicas * (c.accum_steps + 1),
        `${replicas} replicas: ${c.batch_size} is the largest batch within 512`,
      );
      const capped = configFor({ ...big, spec: { ...big.spec, batch_size_cap: 300 } }, measured(8, 0, replicas));
      assert.ok(capped.batch_size <= 300, `${replicas} replicas, cap 300: ${capped.batch_size}`);
    }
  });

  it('leaves a batch in force that is no longer allowed, whatever the gain', () => {
    const j = digits();
    const over = configFor(j, measured(171, 0, 3), undefined, { local_bsz: 171, accum_steps: 0 });
    assert.ok(over.batch_size <= 512, `${over.batch_size}`);
  });

  it('words a change without a model and with a fixed batch', () => {
    const fresh = digits({ perf: null });
    // From 32 x 2 micro-steps to 64 x 2 (batch 128) on one replica.
    const change = (job: typeof fresh, from_local_bsz = 32) =>
      batchChange(
        job,
        measured(32, 1, 1),
        { local_bsz: from_local_bsz, accum_steps: 1 },
        { local_bsz: 64, accum_steps: 1, batch_size: 128, lr_scale: 1 },
      );
    assert.match(change(fresh)!.reason, /: no throughput model yet$/);
    const fixed = { ...fresh, spec: { ...fresh.spec, fixed_batch_size: 128 } };
    assert.match(change(fixed)!.reason, /: fixed batch size 128$/);
    assert.equal(change(fixed, 64), undefined);
  });
});
