import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACTIVE_STATES,
  EXIT_CHECKPOINTED,
  hungReason,
  isFailureExit,
  isTerminal,
  refusal,
  replicaFailure,
  restartBackoff_s,
  settle,
  STOP_EVENT,
  TERMINAL_STATES,
  TRANSITIONS,
  type JobState,
  type SettleAction,
  type SettleJob,
  type StopEvidence,
} from './lifecycle.js';

const ALL: JobState[] = [...ACTIVE_STATES, ...TERMINAL_STATES];
const o = { now_ms: 100_000, early_failure_s: 10, backoff_base_s: 1 };

/** A running job of attempt 2 launched 60 s ago, no failures yet. */
function job(extra: Partial<SettleJob> = {}): SettleJob {
  return {
    state: 'running',
    attempt: 2,
    failures: 0,
    max_restarts: 3,
    stop_kind: null,
    last_failure: null,
    has_target: true,
    launched_at_ms: 40_000,
    ...extra,
  };
}
const exits = (...codes: (number | null)[]) => codes.map((exit_code, rank) => ({ rank, exit_code }));

describe('lifecycle table', () => {
  it('partitions the states and only finish leaves the active ones for good', () => {
    assert.deepEqual(ALL.filter(isTerminal), TERMINAL_STATES);
    for (const [op, t] of Object.entries(TRANSITIONS)) {
      for (const s of t.from) assert.ok(ACTIVE_STATES.includes(s), `${op} starts from an active state`);
      if (op !== 'finish') for (const s of t.to) assert.ok(!isTerminal(s), `${op} never ends a job`);
    }
    assert.deepEqual(TRANSITIONS.finish.to, TERMINAL_STATES);
  });

  it('refuses an operation outside its source states, saying why', () => {
    assert.equal(refusal('launch', 'starting'), undefined);
    assert.equal(refusal('launch', 'queued'), 'expected starting');
    assert.equal(refusal('requeue', 'running'), 'expected starting or rescaling');
    for (const s of TERMINAL_STATES)
      for (const op of Object.keys(TRANSITIONS) as (keyof typeof TRANSITIONS)[])
        assert.equal(refusal(op, s), 'it already finished');
  });

  it('names exit codes and stop events once', () => {
    assert.equal(isFailureExit(0), false);
    assert.equal(isFailureExit(EXIT_CHECKPOINTED), false);
    assert.equal(isFailureExit(137), true);
    assert.deepEqual(Object.values(STOP_EVENT), ['rescale', 'failed-replica', 'hung']);
    assert.deepEqual(
      [1, 2, 3, 7, 8].map((f) => restartBackoff_s(f, 1)),
      [1, 2, 4, 60, 60],
    );
    assert.equal(replicaFailure(0, 3), 'replica 0 failed with exit code 3');
    assert.match(replicaFailure(1, 127), /^replica 1 failed with exit code 127 \(command not found: .* PATH/);
    assert.match(replicaFailure(0, 137), /exit code 137 \(killed by SIGKILL: the kernel out-of-memory killer/);
  });
});

describe('settle', () => {
  const cases: {
    name: string;
    job: SettleJob;
    exits: ReturnType<typeof exits>;
    want: Partial<SettleAction> & { do: SettleAction['do'] };
    reason?: RegExp;
  }[] = [
    { name: 'running, all alive: wait', job: job(), exits: exits(null, null), want: { do: 'wait' } },
    {
      name: 'running, all exited 0: succeeded',
      job: job(),
      exits: exits(0, 0),
      want: { do: 'finish', to: 'succeeded' },
    },
    { name: 'running, one exited 0, one alive: wait', job: job(), exits: exits(0, null), want: { do: 'wait' } },
    {
      name: 'running, unrequested 143: relaunch without failure',
      job: job(),
      exits: exits(143, null),
      want: { do: 'stop', kind: 'rescale' },
      reason: /checkpointed \(exit 143\) without a rescale request/,
    },
    {
      name: 'running, late failure: stop and restart',
      job: job(),
      exits: exits(null, 1),
      want: { do: 'stop', kind: 'failure' },
      reason: /^replica 1 failed with exit code 1; restarting/,
    },
    {
      name: 'running, early failure: restart once',
      job: job({ launched_at_ms: 99_000 }),
      exits: exits(127),
      want: { do: 'stop', kind: 'failure' },
      reason: /within 10s of its start; restarting/,
    },
    {
      name: 'running, same exit code as the previous attempt: fail now',
      job: job({ last_failure: { attempt: 1, rank: 0, exit_code: 3, early: false } }),
      exits: exits(3),
      want: { do: 'fail' },
      reason: /exit code 3 again \(attempt 1 failed the same way\); not retried/,
    },
    {
      name: 'running, early after an early failure: fail now',
      job: job({ launched_at_ms: 99_500, last_failure: { attempt: 1, rank: 0, exit_code: 2, early: true } }),
      exits: exits(1),
      want: { do: 'fail' },
      reason: /within 10s of its start, as attempt 1 did/,
    },
    {
      name: 'running, a second early kill -9 (137, from outside the program): restart, restarts left',
      job: job({ launched_at_ms: 99_500, last_failure: { attempt: 1, rank: 0, exit_code: 137, early: true } }),
      exits: exits(137),
      want: { do: 'stop', kind: 'failure' },
    },
    {
      name: 'running, same code but two attempts ago: restart',
      job: job({ last_failure: { attempt: 0, rank: 0, exit_code: 3, early: true } }),
      exits: exits(3),
      want: { do: 'stop', kind: 'failure' },
    },
    {
      name: 'rescaling, one alive: wait',
      job: job({ state: 'rescaling', stop_kind: 'rescale' }),
      exits: exits(143, null),
      want: { do: 'wait' },
    },
    {
      name: 'rescaling, 0 and 143: succeeded',
      job: job({ state: 'rescaling', stop_kind: 'rescale' }),
      exits: exits(0, 143),
      want: { do: 'finish', to: 'succeeded' },
      reason:
        /^training finished before the stop took effect \(replica 1 exited 143 \(stopped at its end\), the others 0\); nothing lost$/,
    },
    {
      name: 'rescaling, the stop came after the last step, all exited 0: succeeded, no checkpoint claimed',
      job: job({ state: 'rescaling', stop_kind: 'rescale' }),
      exits: exits(0, 0),
      want: { do: 'finish', to: 'succeeded' },
      reason:
        /^training finished before the stop took effect \(every replica exited 0\); nothing to checkpoint, nothing lost$/,
    },
    {
      name: 'rescaling, checkpointed with a target: relaunch now',
      job: job({ state: 'rescaling', stop_kind: 'rescale' }),
      exits: exits(143, 143),
      want: { do: 'relaunch', not_before_ms: 100_000 },
    },
    {
      name: 'rescaling, checkpointed without a target: requeue',
      job: job({ state: 'rescaling', stop_kind: 'rescale', has_target: false }),
      exits: exits(143),
      want: { do: 'requeue' },
    },
    {
      name: 'rescaling after a requested rescale, a peer failed: not a failure',
      job: job({ state: 'rescaling', stop_kind: 'rescale' }),
      exits: exits(143, 1),
      want: { do: 'relaunch', not_before_ms: 100_000 },
    },
    {
      name: 'rescaling after a failure: relaunch after backoff',
      job: job({ state: 'rescaling', stop_kind: 'failure', failures: 2 }),
      exits: exits(1, 143),
      want: { do: 'relaunch', not_before_ms: 102_000 },
      reason: /restart 2\/3 after 2s backoff/,
    },
    {
      name: 'rescaling after a failure past max_restarts: failed',
      job: job({ state: 'rescaling', stop_kind: 'failure', failures: 4 }),
      exits: exits(1),
      want: { do: 'finish', to: 'failed' },
      reason: /4 failures, more than max_restarts \(3\)/,
    },
    {
      name: 'rescaling after a hang (killed, 137): relaunch after backoff',
      job: job({ state: 'rescaling', stop_kind: 'hung', failures: 1 }),
      exits: exits(137),
      want: { do: 'relaunch', not_before_ms: 101_000 },
    },
    { name: 'queued: nothing to settle', job: job({ state: 'queued' }), exits: [], want: { do: 'wait' } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = settle(c.job, c.exits, o);
      for (const [k, v] of Object.entries(c.want))
        assert.deepEqual((got as Record<string, unknown>)[k], v, `${k} of ${JSON.stringify(got)}`);
      if (c.reason) assert.match((got as { reason: string }).reason, c.reason);
    });
  }

  it('records the failure it classified', () => {
    const got = settle(job({ launched_at_ms: 95_000 }), exits(null, 127), o);
    assert.deepEqual(got, {
      do: 'stop',
      kind: 'failure',
      failure: { attempt: 2, rank: 1, exit_code: 127, early: true },
      reason: got.do === 'stop' ? got.reason : '',
    });
  });
});

describe('hungReason', () => {
  const running = {
    state: 'running' as const,
    last_report_at_ms: 10_000,
    launched_at_ms: 5_000,
    last_step_time_s: 0.5,
  };
  it('judges only running jobs that have reported', () => {
    assert.equal(
      hungReason({ ...running, last_report_at_ms: null }, 1e9, 0, 60),
      undefined,
      'a plain job never reports',
    );
    assert.equal(hungReason({ ...running, state: 'rescaling' }, 1e9, 0, 60), undefined);
    assert.match(hungReason(running, 71_000, 0, 60)!, /^hung: no report for 61s \(limit 60s\)/);
    assert.equal(hungReason(running, 69_000, 0, 60), undefined);
  });
  it('counts from the latest of the report, the launch and the start of watching', () => {
    assert.equal(
      hungReason({ ...running, launched_at_ms: 50_000 }, 100_000, 0, 60),
      undefined,
      'a new attempt gets the full timeout',
    );
    assert.equal(
      hungReason(running, 100_000, 60_000, 60),
      undefined,
      'a restarted server gives replicas the full timeout',
    );
  });
  it('scales the timeout with slow steps', () => {
    assert.equal(
      hungReason({ ...running, last_step_time_s: 30 }, 200_000, 0, 60),
      undefined,
      '10 steps of 30 s = 300 s',
    );
    assert.match(hungReason({ ...running, last_step_time_s: 30 }, 311_000, 0, 60)!, /limit 300s/);
  });
});

describe('honest stop events', () => {
  const plain: StopEvidence = {
    checkpoint_on_stop: false,
    checkpoint_at_ms: null,
    launched_at_ms: 40_000,
    stop_requested_at_ms: 100_000,
    spec: {},
  };
  it('says "checkpointed" only with proof; otherwise what the stop loses', () => {
    const requeued = settle(
      job({ state: 'rescaling', stop_kind: 'rescale', has_target: false, evidence: plain }),
      exits(143, 143),
      o,
    );
    assert.deepEqual(requeued, {
      do: 'requeue',
      reason:
        'stopped after 60 s of work; it has no checkpoint the control plane knows of, so it restarts from its beginning; waiting for devices',
    });
    const sdk = settle(
      job({
        state: 'rescaling',
        stop_kind: 'rescale',
        has_target: false,
        evidence: { ...plain, checkpoint_on_stop: true },
      }),
      exits(143),
      o,
    );
    assert.equal((sdk as { reason: string }).reason, 'checkpointed; waiting for devices');
    const resumable = settle(
      job({ state: 'rescaling', stop_kind: 'rescale', evidence: { ...plain, spec: { resumable: true } } }),
      exits(143),
      o,
    );
    assert.equal(
      (resumable as { reason: string }).reason,
      'stopped; it resumes from its own snapshot (declared resumable); relaunching on the new placement',
    );
    const periodic = settle(
      job({ state: 'rescaling', stop_kind: 'rescale', evidence: { ...plain, checkpoint_at_ms: 70_000 } }),
      exits(143),
      o,
    );
    assert.equal(
      (periodic as { reason: string }).reason,
      'stopped; it loses the 30 s of work since its last checkpoint; relaunching on the new placement',
    );
  });

  it('says what a restart after a failure or a hang resumes from (issue 52: never "the last checkpoint" without one)', () => {
    const reason = (evidence: typeof plain): string =>
      (settle(job({ evidence }), exits(null, 1), o) as { reason: string }).reason;
    assert.equal(reason(plain), 'replica 1 failed with exit code 1; restarting from its beginning (no checkpoint)');
    // False friend: the SDK's promise to checkpoint on SIGTERM saves nothing when the script crashes.
    assert.equal(
      reason({ ...plain, checkpoint_on_stop: true }),
      'replica 1 failed with exit code 1; restarting from its beginning (no checkpoint reported yet)',
    );
    assert.equal(
      reason({ ...plain, checkpoint_on_stop: true, checkpoint_at_ms: 70_000 }),
      'replica 1 failed with exit code 1; restarting from its last checkpoint (made 30 s ago; the work since is redone)',
    );
    assert.match(
      reason({ ...plain, spec: { resumable: true } }),
      /resumes from its own snapshot, if it wrote one \(declared resumable\)$/,
    );
    const hung = { state: 'running' as const, last_report_at_ms: 10_000, launched_at_ms: 5_000, last_step_time_s: 0.5 };
    assert.match(
      hungReason(hung, 71_000, 0, 60, { ...plain, checkpoint_on_stop: true })!,
      /killing its replicas and restarting from its beginning \(no checkpoint reported yet\)$/,
    );
    assert.match(
      hungReason(hung, 71_000, 0, 60, { ...plain, checkpoint_at_ms: 41_000 })!,
      /restarting from its last checkpoint \(made 30 s ago/,
    );
  });

  it('does not read an unrequested exit 143 of a plain script as a checkpoint', () => {
    const a = settle(job({ evidence: plain }), exits(143, null), o) as { do: string; reason: string };
    assert.equal(a.do, 'stop');
    assert.doesNotMatch(a.reason, /checkpointed/);
    assert.match(a.reason, /exit 143 alone is no checkpoint/);
  });
});
