import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { runDoctor } from '../run-doctor.js';
import { packagePath } from '../../util/package-root.js';
import { THREADS_UNKNOWN } from './cpu-threads.js';

// Real torch 1.13 CPU recordings of bench/doctor_faults.py (fixtures/doctor/faults).
const fx = (name: string) => packagePath('fixtures', 'doctor', 'faults', name);
const tmp = mkdtempSync(join(tmpdir(), 'goodput-cpu-trace-'));
const traceOf = (name: string) =>
  JSON.parse(gunzipSync(readFileSync(fx(name))).toString('utf8')) as Record<string, unknown>;

describe('thread oversubscription from a CPU trace', () => {
  it('the trace exported by goodput.torch.trace_handler carries the host threads: cpu-contention first', async () => {
    const trace = traceOf('cpu-oversubscribed.trace.json.gz');
    assert.deepEqual(trace['goodput_host'], {
      cpu_count: 2,
      torch_threads: 16,
      local_processes: 1,
      dataloader_workers: 0,
    });
    const r = await runDoctor([fx('cpu-oversubscribed.trace.json.gz')]);
    assert.equal(r.findings[0]!.id, 'trace.cpu-oversubscribed');
    assert.equal(r.findings[0]!.impact_pct, 87.5);
    assert.equal(r.verdict, 'cpu-contention');
    assert.ok(!r.findings.some((f) => f.id === 'trace.compute-bound'), 'not also called compute-bound');
    assert.deepEqual(r.traces[0]!.host, trace['goodput_host']);
  });

  it("without goodput_host (torch's own export) the doctor says it cannot tell, and what to add", async () => {
    for (const file of ['cpu-oversubscribed.plain-export.trace.json.gz', 'cpu-healthy.trace.json.gz']) {
      const trace = traceOf(file);
      delete trace['goodput_host'];
      const path = join(tmp, `${file}.json`);
      writeFileSync(path, JSON.stringify(trace['traceEvents'] ?? trace));
      const r = await runDoctor([path]);
      const note = r.findings.find((f) => f.id === 'trace.compute-bound');
      assert.ok(note?.evidence.includes(THREADS_UNKNOWN), file);
      assert.match(THREADS_UNKNOWN, /cannot be told from this file.*goodput\.torch\.export_trace.*GOODPUT_STEP_LOG/);
      assert.ok(!r.findings.some((f) => f.id === 'trace.cpu-oversubscribed'));
    }
  });

  it('threads that fit the cores: the healthy run stays compute-bound, with no "cannot tell" line', async () => {
    const r = await runDoctor([fx('cpu-healthy.trace.json.gz')]);
    assert.equal(r.verdict, 'cpu-compute');
    assert.equal(r.findings[0]!.id, 'trace.compute-bound');
    assert.ok(!r.findings[0]!.evidence.includes(THREADS_UNKNOWN));
  });

  it("goodput_host as Kineto's add_metadata stores it (a JSON string) is read too; malformed is ignored", async () => {
    const events = traceOf('cpu-healthy.trace.json.gz')['traceEvents'] as unknown[];
    const asString = join(tmp, 'string-host.json');
    writeFileSync(
      asString,
      JSON.stringify({ traceEvents: events, goodput_host: JSON.stringify({ cpu_count: 1, torch_threads: 4 }) }),
    );
    assert.equal((await runDoctor([asString])).findings[0]!.id, 'trace.cpu-oversubscribed');
    const bad = join(tmp, 'bad-host.json');
    writeFileSync(bad, JSON.stringify({ traceEvents: events, goodput_host: { cpu_count: 0, torch_threads: 4 } }));
    assert.equal((await runDoctor([bad])).verdict, 'cpu-compute');
  });
});

describe('time between steps in a CPU trace', () => {
  it('a wait after optimizer.step() (the wait-between-steps recording) is a sync point, first', async () => {
    const r = await runDoctor([fx('cpu-wait-between-steps.trace.json.gz')]);
    assert.equal(r.findings[0]!.id, 'trace.sync-points');
    assert.equal(r.verdict, 'sync-points');
    assert.ok(r.findings[0]!.impact_pct > 40, String(r.findings[0]!.impact_pct));
    assert.ok(
      r.findings[0]!.evidence.some((e) =>
        /from the end of optimizer\.step\(\) to the next step: .* more than the/.test(e),
      ),
    );
  });

  it('Python overhead spread over the step (batch size 1) stays host overhead, not a sync point', async () => {
    const r = await runDoctor([fx('cpu-batch-size-1.trace.json.gz')]);
    assert.equal(r.findings[0]!.id, 'trace.launch-overhead');
    const sync = r.traces[0]!.attribution!.causes.find((c) => c.cause === 'sync-points')!;
    assert.ok(sync.pct < 5, String(sync.pct));
  });
});
