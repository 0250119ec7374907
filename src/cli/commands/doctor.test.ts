import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { syntheticTraceChunks } from '../../../test-support/doctor/synthetic-trace.js';
import { packagePath } from '../../util/package-root.js';

// End to end: the compiled CLI on the real fixtures (run `npx tsc -p .` first).
const cli = packagePath('dist', 'src', 'cli', 'main.js');
const fixtures = packagePath('fixtures', 'doctor');

function doctor(...args: string[]) {
  return node([], ...args);
}

function node(nodeFlags: string[], ...args: string[]) {
  const r = spawnSync(process.execPath, [...nodeFlags, cli, 'doctor', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface JsonReport {
  verdict: string;
  traces: {
    rank: number;
    file: string;
    temporal: { idle_pct: number; compute_pct: number; non_compute_pct: number; kernel_time_us: number } | null;
    comm_comp_overlap_pct: number | null;
  }[];
  gpus: {
    name: string;
    source: string;
    utilization_gpu_pct: number;
    memory_used_bytes: number;
    memory_total_bytes: number;
    power_draw_w: number;
  }[];
  nccl: { transports: Record<string, number>; avg_bus_bandwidth_gbps: number } | null;
  findings: { id: string; severity: string; title: string; evidence: string[]; fix: string[] }[];
  kernel_types: { run: string; ranks: number[]; rows: { kernel_type: string; time_us: number; pct: number }[] }[];
}

describe('goodput doctor (CLI, end to end)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'goodput-doctor-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('analyses every fixture: HTA numbers, nvidia-smi values, NCCL transports, ranked findings', () => {
    const r = doctor('--json', fixtures);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout) as JsonReport;
    const rank = (file: string, n: number) => j.traces.find((t) => t.file.includes(file) && t.rank === n)!;
    assert.deepEqual(rank('recsys-128rank-sampled', 0).temporal, {
      ...rank('recsys-128rank-sampled', 0).temporal!,
      idle_pct: 53.56,
      compute_pct: 17.71,
      non_compute_pct: 28.74,
      kernel_time_us: 600058,
    });
    assert.equal(rank('recsys-128rank-sampled', 1).comm_comp_overlap_pct, 20.05);
    assert.equal(rank('v100-ddp1', 0).comm_comp_overlap_pct, null);
    assert.equal(rank('v100-ddp1', 0).temporal!.compute_pct, 96.75);
    assert.equal(rank('a100-2rank-nccl', 0).temporal!.idle_pct, 77.78);
    assert.equal(rank('cpu-only', 34).temporal, null);
    const h100 = j.gpus.find((g) => g.name === 'NVIDIA H100 80GB HBM3' && g.source.includes('590.48.01.txt'))!;
    assert.deepEqual(
      [h100.utilization_gpu_pct, h100.memory_used_bytes, h100.memory_total_bytes, h100.power_draw_w],
      [100, 20780679168, 85520809984, 631.95],
    );
    const t4 = j.gpus.find((g) => g.name === 'Tesla T4')!;
    assert.deepEqual([t4.utilization_gpu_pct, t4.memory_used_bytes, t4.power_draw_w], [0, 1032 * 2 ** 20, 26.78]);
    assert.deepEqual(j.nccl!.transports, { 'NET/AWS Libfabric': 64, 'P2P/IPC': 256 });
    assert.equal(j.nccl!.avg_bus_bandwidth_gbps, 11.2432);
    const ids = j.findings.map((f) => f.id);
    for (const id of [
      'trace.launch-overhead',
      'trace.input-pipeline',
      'trace.sync-points',
      'trace.fp32-matmul-on-tensor-core-gpu',
      'trace.unoverlapped-communication',
      'trace.pageable-memcpy',
      'trace.compute-bound',
      'trace.straggler-rank',
      'horovod.straggler-rank',
      'smi.low-gpu-utilization',
      'topo.gpu-pairs-cross-host-bridge',
      'nccl.bus-bandwidth',
      'steps.data-wait',
      'steps.optimizer-heavy',
      'steps.compute-bound',
    ]) {
      assert.ok(ids.includes(id), `missing ${id}`);
    }
    for (const f of j.findings) assert.ok(f.severity && f.title && f.evidence.length > 0 && f.fix.length > 0, f.id);
    // the fixtures' notes and expected-value files are named as skipped, not fatal
    assert.match(r.stderr, /hta-reference-output\.txt: not a recognised input/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('a directory of ranks is one run: straggler and kernel-type breakdown across ranks', () => {
    const r = doctor('--json', join(fixtures, 'pytorch-traces', 'recsys-128rank-sampled'));
    const j = JSON.parse(r.stdout) as JsonReport;
    assert.deepEqual(j.kernel_types[0]!.ranks, [0, 1]);
    assert.deepEqual(
      j.kernel_types[0]!.rows.slice(0, 3).map((k) => [k.kernel_type, k.time_us, k.pct]),
      [
        ['COMMUNICATION', 305584, 55.5],
        ['COMPUTATION', 185023, 33.6],
        ['COMPUTATION overlapping COMMUNICATION', 56747, 10.3],
      ],
    );
    assert.equal(j.verdict, 'communication');
    assert.equal(j.findings[0]!.id, 'trace.unoverlapped-communication');
  });

  it('names unreadable and unknown inputs in warnings and still analyses the rest', () => {
    writeFileSync(join(tmp, 'notes.txt'), 'just some text\n');
    writeFileSync(join(tmp, 'broken.json.gz'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3]));
    writeFileSync(join(tmp, 'bad-trace.json'), '{"traceEvents": [{"ph": "X", "cat": "kernel" ::: }');
    const mi250 = gunzipSync(readFileSync(join(fixtures, 'pytorch-traces', 'mi250-minitoy.json.gz')));
    writeFileSync(join(tmp, 'truncated.json.gz'), gzipSync(mi250.subarray(0, Math.floor(mi250.length * 0.7))));
    copyFileSync(join(fixtures, 'nvidia-smi', 'xml', 'tesla-t4.xml'), join(tmp, 'gpu0'));
    const r = doctor(tmp, join(tmp, 'missing.json'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /notes\.txt: not a recognised input/);
    assert.match(r.stderr, /broken\.json\.gz: unreadable/);
    assert.match(r.stderr, /bad-trace\.json: could not be read as pytorch-trace/);
    assert.match(r.stderr, /missing\.json: no such file or directory/);
    assert.match(r.stderr, /truncated\.json\.gz: trace ends before its JSON is closed/);
    assert.doesNotMatch(r.stderr + r.stdout, /\n\s+at /);
    assert.match(r.stdout, /Tesla T4/);
  });

  it('writes a self-contained HTML report: time axes, one colour per cause, a link per finding to its evidence', () => {
    const out = join(tmp, 'report.html');
    const r = doctor(
      '--html',
      out,
      join(fixtures, 'pytorch-traces', 'a100-2rank-nccl'),
      join(fixtures, 'nvidia-smi', 'captures'),
      join(fixtures, 'faults', 'cpu-slow-getitem.steps.json'),
      join(fixtures, 'faults', 'cpu-slow-getitem.trace.json.gz'),
    );
    assert.equal(r.status, 0, r.stderr);
    const html = readFileSync(out, 'utf8');
    assert.equal(html.match(/<svg /g)?.length, 4);
    assert.match(html, /GPU utilization over time/);
    assert.match(html, /rank 0 \(nccl_data\.json\.gz\)/);
    assert.match(html, /COMPUTATION overlapping COMMUNICATION/);
    assert.match(html, /Host-side launch \/ per-step overhead: 77\.8% of GPU time/);
    // both charts over time have time axes (seconds, milliseconds), not sample numbers
    assert.equal(html.match(/data-x-axis="time"/g)?.length, 2);
    assert.match(html, />\d+ s<\/text>/);
    assert.match(html, />\d+ ms<\/text>/);
    assert.doesNotMatch(html, /sample \(input order\)/);
    // every finding links to an element that exists
    const links = [...html.matchAll(/class="evidence-link" href="#([^"]+)"/g)].map((m) => m[1]!);
    const findings = html.match(/<section class="finding /g)!.length;
    assert.equal(links.length, findings);
    for (const id of links) assert.match(html, new RegExp(`id="${id}"`), id);
    // the input-pipeline colour is the same in the time chart, its legend and the step table
    const orange = '#f28e2b';
    assert.match(html, new RegExp(`fill="${orange}"><title>waiting for input data`));
    assert.match(html, new RegExp(`color:${orange}">&#9632;</span> waiting for input data`));
    assert.match(html, new RegExp(`<td><span style="color:${orange}">&#9632;</span>`));
    assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3)/);
  });

  it('streams a generated 30 MB trace within a 48 MiB heap (the whole text would not fit)', () => {
    const file = join(tmp, 'big-rank-0.json');
    let size = 0;
    writeFileSync(file, '');
    for (const chunk of syntheticTraceChunks({ rank: 0, worldSize: 1, steps: 4, kernelsPerStep: 9000, seed: 7 })) {
      size += chunk.length;
      writeFileSync(file, chunk, { flag: 'a' });
    }
    assert.ok(size > 25e6, `generated ${size} bytes`);
    const r = node(['--max-old-space-size=48'], '--json', file);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout) as JsonReport & { traces: { gpu_events: number; iterations: number[] }[] };
    assert.equal(j.traces[0]!.gpu_events, 3 * 9000);
    assert.deepEqual(j.traces[0]!.iterations, [1, 2, 3]);
  });

  it('a missing path is "no usable input" with a non-zero exit, not a diagnosis', () => {
    const r = doctor(join(tmp, 'no-such-run'));
    assert.equal(r.status, 1);
    assert.match(r.stdout, /no usable input/);
    assert.doesNotMatch(r.stdout, /nothing stands out|Limiting resource/);
    assert.match(r.stderr, /no-such-run: no such file or directory/);
  });

  it('an empty profiler trace is "no-data" with a non-zero exit, not "healthy"', () => {
    const empty = join(tmp, 'empty-trace.json');
    writeFileSync(empty, JSON.stringify({ schemaVersion: 1, traceEvents: [] }));
    const json = doctor(empty, '--json');
    assert.equal(json.status, 1, json.stderr);
    assert.equal((JSON.parse(json.stdout) as JsonReport).verdict, 'no-data');
    const text = doctor(empty);
    assert.equal(text.status, 1);
    assert.match(text.stdout, /Limiting resource: unknown: the inputs hold no measured activity/);
    assert.match(text.stdout, /trace\.no-gpu-activity/);
    // Beside a real trace the empty one no longer decides the verdict.
    const both = doctor(empty, join(fixtures, 'pytorch-traces', 'v100-ddp1-gpu-bound.rank0.json.gz'), '--json');
    assert.equal(both.status, 0, both.stderr);
    assert.notEqual((JSON.parse(both.stdout) as JsonReport).verdict, 'no-data');
  });

  it('a directory of unrelated runs: one verdict per run, counts that match the numbered list, findings merged per GPU', () => {
    const dir = join(tmp, 'runs');
    mkdirSync(dir);
    for (const f of ['cpu-slow-getitem.trace.json.gz', 'cpu-healthy.trace.json.gz', 'cpu-batch-size-1.steps.json'])
      copyFileSync(join(fixtures, 'faults', f), join(dir, f));
    for (const f of ['tesla-t4.xml', 'a10g.xml', 'rtx-3060-v12.xml'])
      copyFileSync(join(fixtures, 'nvidia-smi', 'xml', f), join(dir, f));
    const j = JSON.parse(doctor('--json', dir).stdout) as JsonReport & {
      runs: { run: string; verdict: string; first_finding: string }[];
    };
    const verdict = (name: string) => j.runs.find((r) => r.run.endsWith(name))!.verdict;
    assert.equal(verdict('cpu-slow-getitem.trace.json.gz'), 'input-pipeline');
    assert.equal(verdict('cpu-healthy.trace.json.gz'), 'cpu-compute');
    assert.equal(verdict('cpu-batch-size-1.steps.json'), 'host-overhead');
    assert.equal(j.runs.length, 6);
    const persistence = j.findings.filter((f) => f.id === 'smi.persistence-mode-off');
    assert.ok(persistence.length <= 1, `${persistence.length} persistence findings`);
    const text = doctor(dir).stdout;
    const issues = Number(/\((\d+) issue\(s\) to fix/.exec(text)![1]);
    assert.equal((text.match(/^\d+\. \[/gm) ?? []).length, issues);
    assert.match(text, /Runs \(6\), each with its own verdict/);
    // ranks 0 and 1 of two different jobs (world sizes 2 and 128) are two runs, not one
    const mixed = join(tmp, 'mixed');
    mkdirSync(mixed);
    copyFileSync(join(fixtures, 'pytorch-traces', 'a100-2rank-nccl', 'nccl_data.json.gz'), join(mixed, 'a.json.gz'));
    copyFileSync(
      join(fixtures, 'pytorch-traces', 'recsys-128rank-sampled', 'rank-1.json.gz'),
      join(mixed, 'b.json.gz'),
    );
    const m = JSON.parse(doctor('--json', mixed).stdout) as { runs: { run: string }[]; kernel_types: unknown[] };
    assert.equal(m.runs.length, 2);
    assert.equal(m.kernel_types.length, 2);
  });

  it('exits 2 with a usage error and no stack when no input is given', () => {
    const r = doctor();
    assert.equal(r.status, 2);
    assert.match(r.stderr, /error\[E_USAGE\]/);
    const none = doctor(join(tmp, 'nothing-here'));
    assert.equal(none.status, 1);
  });
});
