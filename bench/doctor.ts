/**
 * Benchmark of `goodput doctor`: seconds and peak memory to analyse (1) the largest fixture and
 * (2) a generated multi-rank trace of about 500 MB. Each analysis runs in a child process with
 * `--max-old-space-size=1024`, so passing at all shows the heap bound; the child reports its wall
 * time, peak heap and max RSS. The baseline beside each figure is a read-only pass over the same
 * bytes (decompress + decode, no parsing), measured in the same run: the I/O floor.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { textChunks } from '../src/doctor/io/read-files.js';
import { runDoctor } from '../src/doctor/run-doctor.js';
import { syntheticTraceChunks } from '../test-support/doctor/synthetic-trace.js';
import { packagePath } from '../src/util/package-root.js';
import { benchArgs } from './bench-args.js';

interface ChildResult {
  mode: string;
  seconds: number;
  peak_heap_mb: number;
  max_rss_mb: number;
  detail: string;
}

async function child(mode: string, paths: string[]): Promise<void> {
  let peakHeap = 0;
  const timer = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const t0 = performance.now();
  let detail: string;
  if (mode === 'read') {
    let chars = 0;
    for (const p of paths) for await (const c of textChunks(p)) chars += c.length;
    detail = `${(chars / 1e6).toFixed(1)} M chars`;
  } else {
    const r = await runDoctor(paths);
    detail = `${r.traces.length} rank(s), ${r.traces.reduce((a, t) => a + t.gpu_events, 0)} GPU events, ${r.findings.length} findings`;
  }
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  const out: ChildResult = {
    mode,
    seconds,
    peak_heap_mb: peakHeap / 2 ** 20,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
    detail,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

function measure(mode: string, paths: string[]): ChildResult {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ['--max-old-space-size=1024', self, '--child', mode, ...paths], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`child ${mode} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildResult;
}

async function writeTrace(
  path: string,
  rank: number,
  worldSize: number,
  kernelsPerStep: number,
  steps: number,
): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  for (const chunk of syntheticTraceChunks({ rank, worldSize, steps, kernelsPerStep, seed: 42 }, 1 << 20)) {
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return bytes;
}

function report(label: string, size: string, full: ChildResult, base: ChildResult): void {
  console.log(
    `${label} (${size}): ${full.seconds.toFixed(2)} s, peak heap ${full.peak_heap_mb.toFixed(0)} MiB, max RSS ${full.max_rss_mb.toFixed(0)} MiB  [${full.detail}]`,
  );
  console.log(
    `  baseline read-only pass: ${base.seconds.toFixed(2)} s, peak heap ${base.peak_heap_mb.toFixed(0)} MiB, max RSS ${base.max_rss_mb.toFixed(0)} MiB  [${base.detail}]`,
  );
}

async function main(): Promise<void> {
  const traces = packagePath('fixtures', 'doctor', 'pytorch-traces');
  const candidates = [
    'v100-ddp1-gpu-bound.rank0.json.gz',
    'a100-2rank-nccl/nccl_data.json.gz',
    'recsys-128rank-sampled/rank-0.json.gz',
  ].map((f) => join(traces, f));
  const largest = candidates.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  report(
    `largest fixture ${largest.split('/').slice(-1)[0]}`,
    `${(statSync(largest).size / 1e6).toFixed(2)} MB gzip`,
    measure('doctor', [largest]),
    measure('read', [largest]),
  );

  const targetMb = Number(process.env['DOCTOR_BENCH_MB'] ?? 500);
  const ranks = 4;
  const dir = join(tmpdir(), `goodput-doctor-bench-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const t0 = performance.now();
    // ~0.83 kB of trace text per kernel (cpu_op, runtime call, kernel, flow event).
    const kernelsPerStep = 5000;
    const steps = Math.max(2, Math.round((targetMb * 1e6) / ranks / (kernelsPerStep * 830)));
    let total = 0;
    for (let r = 0; r < ranks; r++)
      total += await writeTrace(join(dir, `rank-${r}.json`), r, ranks, kernelsPerStep, steps);
    console.log(
      `generated ${ranks} ranks x ${steps} steps x ${kernelsPerStep} kernels: ${(total / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const files = readdirSync(dir).map((f) => join(dir, f));
    report(
      `generated ${ranks}-rank trace`,
      `${(total / 1e6).toFixed(0)} MB`,
      measure('doctor', [dir]),
      measure('read', files),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') await child(argv[1]!, argv.slice(2));
else {
  benchArgs(
    `
usage: npm run bench:doctor
Seconds and peak memory of goodput doctor on the largest fixture and on a generated 500 MB trace.
`,
    {},
  );
  await main();
}
