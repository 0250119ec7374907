import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { horovodFindings } from '../findings/comm-findings.js';
import { stepBreakdownFindings } from '../findings/step-findings.js';
import { detectKind } from '../inputs/table.js';
import { parseHorovodTimeline } from './horovod-timeline.js';
import { parseStepBreakdown, summarizeSteps } from './step-breakdown.js';

const timeline = () =>
  readFileSync(packagePath('fixtures', 'doctor', 'horovod', 'horovod_timeline_small.json'), 'utf8');

describe('Horovod timeline', () => {
  it('measures negotiation delay per rank from the readiness ticks', () => {
    const t = parseHorovodTimeline(timeline());
    assert.equal(t.events, 57);
    assert.equal(t.cycles, 2);
    assert.equal(t.truncated, false);
    assert.deepEqual(
      t.ranks.map((r) => [r.rank, r.negotiations, r.max_delay_us, r.times_last]),
      [
        [4, 14, 0, 0],
        [5, 2, 340901, 2],
        [7, 3, 320452, 2],
      ],
    );
    assert.equal(t.ranks[1]!.mean_delay_us, 340899.5);
    // two NEGOTIATE_ALLREDUCE spans are closed: pid 1 (77575718041 -> 77576058946) and pid 2 (77575718047 -> 77576058948)
    assert.equal(t.phase_us['NEGOTIATE_ALLREDUCE'], 340905 + 340901);
    const f = horovodFindings(t, 'hvd');
    assert.equal(f[0]!.id, 'horovod.straggler-rank');
    assert.match(f[0]!.title, /rank 5/);
  });

  it('reads an unterminated timeline, including a torn last line', () => {
    const text = timeline().trim().replace(/\]$/, '');
    const cut = text.slice(0, text.lastIndexOf('{"ph": "X", "name": "7"') + 20);
    const t = parseHorovodTimeline(cut);
    assert.equal(t.truncated, true);
    assert.equal(t.events, 56);
    assert.equal(detectKind(cut), 'horovod-timeline');
  });
});

describe('SDK step breakdown export', () => {
  const steps = [0, 1, 2].flatMap((step) => [
    { rank: 0, step, data_wait_s: 0.05, forward_backward_s: 0.2, sync_s: 0.1, optimizer_s: 0.02 },
    { rank: 1, step, data_wait_s: 0.05, forward_backward_s: 0.3, sync_s: 0.01, optimizer_s: 0.02 },
  ]);

  it('validates the documented object and the bare array, and summarises per rank', () => {
    const b = parseStepBreakdown({ kind: 'goodput.step_breakdown', job: 'j1', steps });
    assert.equal(b.job, 'j1');
    assert.equal(parseStepBreakdown(steps).steps.length, 6);
    const s = summarizeSteps(b);
    assert.deepEqual(
      s.map((r) => [r.rank, r.steps, Math.round(r.step_time_s * 1000)]),
      [
        [0, 3, 370],
        [1, 3, 380],
      ],
    );
    assert.equal(detectKind(JSON.stringify({ kind: 'goodput.step_breakdown', steps })), 'step-breakdown');
    assert.equal(detectKind(JSON.stringify(steps)), 'step-breakdown');
  });

  it('names the bad field', () => {
    assert.throws(
      () => parseStepBreakdown({ kind: 'goodput.step_breakdown', steps: [{ ...steps[0], sync_s: -1 }] }),
      /steps\.0\.sync_s/,
    );
  });

  it('flags data wait, heavy sync and the slower rank; compute is still the largest share', () => {
    const f = stepBreakdownFindings(parseStepBreakdown(steps), 's');
    assert.deepEqual(f.map((x) => x.id).sort(), [
      'steps.compute-bound',
      'steps.data-wait',
      'steps.straggler-rank',
      'steps.sync-heavy',
    ]);
    // impacts are the measured shares of step time, not constants: data 0.3 s and sync 0.33 s of 2.25 s
    assert.equal(f.find((x) => x.id === 'steps.data-wait')!.impact_pct.toFixed(2), '13.33');
    assert.equal(f.find((x) => x.id === 'steps.sync-heavy')!.impact_pct.toFixed(2), '14.67');
  });
});

describe('content detection', () => {
  it('recognises kinds by content, not by name', () => {
    assert.equal(detectKind('{"schemaVersion": 1, "deviceProperties": []'), 'pytorch-trace');
    assert.equal(detectKind('<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "x">'), 'nvidia-smi-xml');
    assert.equal(detectKind('\n==============NVSMI LOG==============\n'), 'nvidia-smi-query');
    assert.equal(detectKind('\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV1\t0-3\n'), 'nvidia-smi-topo');
    assert.equal(detectKind('# gpu    pwr  gtemp\n# Idx      W      C\n    0     69     41\n'), 'nvidia-smi-monitor');
    assert.equal(detectKind('name, utilization.gpu [%]\nA100, 5 %\n'), 'nvidia-smi-csv');
    assert.equal(detectKind('[1,0]<stdout>:host:1:1 [0] NCCL INFO Bootstrap : Using eth0\n'), 'nccl-log');
    assert.equal(
      detectKind('A document that mentions `NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC` in prose'),
      undefined,
    );
    assert.equal(detectKind('hello'), undefined);
  });
});
