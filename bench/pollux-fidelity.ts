/**
 * Fidelity against the Pollux artifact: runs a policy on workloads 1-4 at loads 0.5/1.0/1.5/2.0
 * (N seeds each) and prints our average JCT beside the published one, per workload and load,
 * the mean of workloads 1-4 per load, and the relative errors. Deterministic policies (tiresias,
 * optimus) must match exactly, every job; for pollux the acceptance is: mean at 1.0 within +-5%,
 * each workload at 1.0 within +-10%, the other loads' means within +-10%.
 *
 * Usage: npm run bench:fidelity -- [--policy pollux] [--seeds 3] [--loads 0.5,1.0,1.5,2.0]
 *        [--workloads 1,2,3,4] [--concurrency 2]
 */
import { runParallel, type SimTask } from '../src/sim/parallel.js';
import { publishedResults, workloadFile } from './pollux-data.js';
import { benchArgs } from './bench-args.js';

const USAGE = `
usage: npm run bench:fidelity -- [--policy pollux] [--seeds 3] [--loads 0.5,1.0,1.5,2.0]
         [--workloads 1,2,3,4] [--concurrency 2]
Our simulator's average JCT beside the published Pollux artifact's, per workload and load.
`;
const values = benchArgs(USAGE, {
  policy: { type: 'string', default: 'pollux' },
  seeds: { type: 'string' },
  loads: { type: 'string', default: '0.5,1.0,1.5,2.0' },
  workloads: { type: 'string', default: '1,2,3,4' },
  concurrency: { type: 'string', default: '2' },
});
const policy = values.policy;
const deterministic = policy === 'tiresias' || policy === 'optimus' || policy === 'fifo';
const seeds = Number(values.seeds ?? (deterministic ? 1 : 3));
const loads = values.loads.split(',');
const workloads = values.workloads.split(',').map(Number);
const published = publishedResults();

const tasks: (SimTask & { load: string; k: number; seed: number })[] = [];
for (const load of loads) {
  for (const k of workloads) {
    for (let seed = 1; seed <= seeds; seed++) {
      tasks.push({ file: workloadFile(load, k), settings: { policy, seed, fairness: false }, load, k, seed });
    }
  }
}
const started = performance.now();
let done = 0;
let reports;
try {
  reports = await runParallel(
    tasks,
    (p) => {
      if (!p.done) return;
      done++;
      process.stderr.write(
        `\r${done}/${tasks.length} runs done (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    },
    Number(values.concurrency),
  );
} catch (error) {
  console.error(`\nfidelity run failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
process.stderr.write('\n');

const pct = (ours: number, theirs: number) => (100 * (ours - theirs)) / theirs;
const fmt = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
let pass = true;
console.log(
  `policy ${policy}, ${seeds} seed(s) per workload, ${((performance.now() - started) / 1000).toFixed(0)} s wall`,
);
console.log('load  workload    ours avg JCT s  (min..max over seeds)  published s  rel. error  jobs exact');
for (const load of loads) {
  const pub = published[`${policy}-${load}`];
  const ours: number[] = [];
  const theirs: number[] = [];
  for (const k of workloads) {
    const runs = reports.filter((_, i) => tasks[i]!.load === load && tasks[i]!.k === k);
    const avgs = runs.map((r) => r.avg_jct_s);
    const mean = avgs.reduce((s, x) => s + x, 0) / avgs.length;
    const name = `workload-${k}`;
    const p = pub?.avg_jct_s[name];
    let exact = '';
    if (pub) {
      const expected = pub.job_jct_s[name]!;
      const hits = runs.map((r) => Object.entries(expected).filter(([job, jct]) => r.jobs[job] === jct).length);
      exact = `${Math.min(...hits)}/${Object.keys(expected).length}`;
    }
    ours.push(mean);
    if (p !== undefined) theirs.push(p);
    const err = p !== undefined ? pct(mean, p) : NaN;
    if (load === '1.0' && !deterministic && Math.abs(err) > 10) pass = false;
    if (deterministic && exact !== '' && !exact.startsWith(`${Object.keys(pub!.job_jct_s[name]!).length}/`))
      pass = false;
    console.log(
      `${load.padEnd(5)} ${name.padEnd(11)} ${mean.toFixed(1).padStart(14)}  ${`${Math.min(...avgs).toFixed(0)}..${Math.max(...avgs).toFixed(0)}`.padStart(21)}  ${(p?.toFixed(1) ?? 'n/a').padStart(11)}  ${(p !== undefined ? fmt(err) : '').padStart(10)}  ${exact.padStart(10)}`,
    );
  }
  const m = ours.reduce((s, x) => s + x, 0) / ours.length;
  const pm = theirs.length === ours.length ? theirs.reduce((s, x) => s + x, 0) / theirs.length : NaN;
  const err = pct(m, pm);
  const limit = load === '1.0' ? 5 : 10;
  if (!deterministic && Math.abs(err) > limit) pass = false;
  console.log(
    `${load.padEnd(5)} ${'mean 1-4'.padEnd(11)} ${m.toFixed(1).padStart(14)}  ${''.padStart(21)}  ${pm.toFixed(1).padStart(11)}  ${fmt(err).padStart(10)}  (accept +-${deterministic ? 0 : limit}%)`,
  );
}
console.log(pass ? 'ACCEPTED' : 'NOT within the acceptance bounds');
process.exitCode = pass ? 0 : 1;
