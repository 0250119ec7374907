/**
 * The held-out case of issue #50: a CPU trace of batch 1, 10 ms steps of which operators take
 * 0.5 ms, with the script's own `record_function('train_step')` around each step. The Python
 * between the operators is per-step overhead (fix: a larger batch), not compute: the annotation
 * marks a region, it is no operator. Synthesized in both shapes the doctor reads: Kineto (torch
 * 2.x, with categories) and the legacy chrome trace of torch 1.x (no categories).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runDoctor } from '../run-doctor.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-tiny-batch-'));

/** Ten 10 ms steps; operators 0.5 ms of each (forward 0.2, backward 0.2, optimizer 0.1). */
function tinyBatchEvents(legacy: boolean): object[] {
  const ev = (cat: string, name: string, ts: number, dur: number) =>
    legacy
      ? { ph: 'X', pid: 'CPU functions', tid: 1, name, ts, dur }
      : { ph: 'X', cat, pid: 100, tid: 1, name, ts, dur, args: {} };
  const out: object[] = [];
  for (let k = 0; k < 10; k++) {
    const t = 1_000_000 + k * 10_000;
    if (!legacy) out.push(ev('user_annotation', `ProfilerStep#${k}`, t, 10_000));
    out.push(ev('user_annotation', 'train_step', t + 100, 9_800));
    out.push(ev('cpu_op', 'aten::linear', t + 3_000, 200));
    out.push(ev('cpu_op', 'aten::addmm', t + 3_050, 100));
    out.push(ev('cpu_op', 'autograd::engine::evaluate_function: AddmmBackward0', t + 6_000, 200));
    out.push(ev('cpu_op', 'AddmmBackward0', t + 6_010, 180));
    out.push(ev('user_annotation', 'Optimizer.step#SGD.step', t + 9_000, 100));
    out.push(ev('cpu_op', 'aten::add_', t + 9_010, 80));
  }
  return out;
}

describe('tiny batch on CPU (held-out case)', () => {
  for (const legacy of [false, true]) {
    it(`${legacy ? 'legacy chrome trace' : 'Kineto trace'}: per-step overhead, fix a larger batch`, async () => {
      const path = join(dir, `tiny-${legacy ? 'legacy' : 'kineto'}.json`);
      const events = tinyBatchEvents(legacy);
      writeFileSync(path, JSON.stringify(legacy ? events : { schemaVersion: 1, traceEvents: events }));
      const r = await runDoctor([path]);
      const first = r.findings[0]!;
      assert.equal(first.id, 'trace.launch-overhead', r.findings.map((f) => `${f.id} ${f.impact_pct}`).join('; '));
      assert.ok(first.impact_pct > 90, `${first.impact_pct}`);
      assert.match(first.fix[0]!, /raise the batch size/);
      assert.ok(!r.findings.some((f) => f.id === 'trace.compute-bound'));
    });
  }
});
