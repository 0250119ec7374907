/**
 * Fault-injection benchmark of `goodput doctor`: records real PyTorch CPU runs (Debian's torch,
 * bench/doctor_faults.py) with one injected bottleneck each, runs the doctor on each run's profiler
 * trace and, separately, on its SDK step log, and prints per case the injected cause, the doctor's
 * first finding and verdict, whether they name it, and last the accuracy. Then replays the GPU
 * recordings and HTA's traces in fixtures/doctor with their known answers.
 *
 *   npm run bench:doctor-faults [-- --steps 12 --cases slow-getitem,healthy --keep DIR]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDoctor } from '../src/doctor/run-doctor.js';
import { packagePath } from '../src/util/package-root.js';
import { CPU_CASES, GPU_REPLAYS, judge, type FaultCase, type Judgement } from '../test-support/doctor/fault-cases.js';
import { benchArgs } from './bench-args.js';

const USAGE = `usage: npm run bench:doctor-faults [-- --steps N] [--cases a,b] [--keep DIR] [--python PATH]

Records one real PyTorch CPU run per injected bottleneck (${CPU_CASES.map((c) => c.name).join(', ')}),
diagnoses each through its profiler trace and its SDK step log, prints whether the doctor's first
finding and verdict name the injected cause, then replays the GPU fixtures; last, the accuracy.
  --steps N      training steps per run (default 12; the profiler keeps steps 5..N)
  --cases LIST   only these CPU cases
  --keep DIR     keep the recordings in DIR (default: a temporary folder, removed)
  --python PATH  Python with torch (default: $GOODPUT_PYTHON or /usr/bin/python3)`;

interface Row {
  group: string;
  name: string;
  via: string;
  injected: string;
  note?: string;
  notJudged?: string;
  j: Judgement;
}

function record(python: string, c: FaultCase, dir: string, steps: number): string | null {
  const t0 = performance.now();
  const r = spawnSync(
    python,
    [packagePath('bench', 'doctor_faults.py'), '--case', c.name, '--out', dir, '--steps', String(steps)],
    { encoding: 'utf8', timeout: 180_000 },
  );
  process.stderr.write(`  recorded ${c.name} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  if (r.status !== 0)
    return `recorder failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`;
  return null;
}

async function main(): Promise<void> {
  const args = benchArgs(USAGE, {
    steps: { type: 'string', default: '12' },
    cases: { type: 'string' },
    keep: { type: 'string' },
    python: { type: 'string' },
  });
  const steps = Number(args.steps);
  if (!Number.isInteger(steps) || steps < 6) {
    console.error('error: --steps must be an integer >= 6');
    process.exit(2);
  }
  const only = args.cases?.split(',');
  const cases = CPU_CASES.filter((c) => !only || only.includes(c.name));
  const python = args.python ?? process.env['GOODPUT_PYTHON'] ?? '/usr/bin/python3';
  const root = args.keep ?? mkdtempSync(join(tmpdir(), 'goodput-doctor-faults-'));
  const rows: Row[] = [];
  const t0 = performance.now();
  process.stderr.write(`recording ${cases.length} CPU run(s) with ${python} (${steps} steps each) in ${root}\n`);
  for (const c of cases) {
    const dir = join(root, c.name);
    mkdirSync(dir, { recursive: true });
    const failed = record(python, c, dir, steps);
    for (const [via, file, key] of [
      ['profiler trace', 'trace.json', 'trace'],
      ['SDK step log', 'steps.json', 'steps'],
    ] as const) {
      const report = await runDoctor([join(dir, file)]);
      const j = failed
        ? { first_finding: failed, first_bottleneck: null, verdict: report.verdict, issues: 0, match: false }
        : judge(report, c);
      rows.push({
        group: 'CPU, recorded now',
        name: c.name,
        via,
        injected: c.injected,
        note: c.note,
        notJudged: c.notJudgedVia?.via === key ? c.notJudgedVia.why : undefined,
        j,
      });
    }
  }
  for (const g of GPU_REPLAYS) {
    for (const f of g.files) {
      const report = await runDoctor([packagePath('fixtures', 'doctor', ...f.split('/'))]);
      const key = f.endsWith('.steps.json') ? 'steps' : 'trace';
      rows.push({
        group: 'GPU, replayed fixtures',
        name: g.name,
        via: key === 'steps' ? 'SDK step log' : 'profiler trace',
        injected: g.injected,
        notJudged: g.notJudgedVia?.via === key ? g.notJudgedVia.why : undefined,
        j: judge(report, g),
      });
    }
  }
  if (!args.keep) rmSync(root, { recursive: true, force: true });

  let group = '';
  for (const r of rows) {
    if (r.group !== group) {
      group = r.group;
      console.log(`\n== ${group}`);
    }
    console.log(`${r.notJudged ? 'n/a' : r.j.match ? 'yes' : 'NO '}  ${r.name} via ${r.via}`);
    console.log(`     injected: ${r.injected}`);
    if (r.note) console.log(`     expected: ${r.note}`);
    if (r.notJudged) console.log(`     not judged: ${r.notJudged}`);
    console.log(`     first finding: ${r.j.first_finding}`);
    console.log(`     verdict: ${r.j.verdict}; issues: ${r.j.issues}; match: ${r.j.match ? 'yes' : 'no'}`);
  }
  // Accuracy over the judged rows; rows whose artifact carries no evidence of the cause are
  // counted apart (never as matches) and named, so the figure cannot hide them.
  const acc = (all: Row[]) => {
    const list = all.filter((r) => !r.notJudged);
    const hits = list.filter((r) => r.j.match).length;
    const apart = all.length - list.length;
    return `${hits}/${list.length} (${((100 * hits) / Math.max(1, list.length)).toFixed(1)}%)${apart ? `, ${apart} not judged` : ''}`;
  };
  console.log('');
  for (const via of ['profiler trace', 'SDK step log'])
    console.log(
      `accuracy, CPU recorded, via ${via}: ${acc(rows.filter((r) => r.group.startsWith('CPU') && r.via === via))}`,
    );
  console.log(`accuracy, GPU replayed: ${acc(rows.filter((r) => r.group.startsWith('GPU')))}`);
  console.log(`accuracy, all: ${acc(rows)}   (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  for (const r of rows.filter((x) => x.notJudged))
    console.log(`not judged: ${r.name} via ${r.via} (doctor's first finding there: ${r.j.first_finding})`);
}

await main();
