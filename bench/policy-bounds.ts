/**
 * How much room the acceptance target leaves: per (load, workload), the average JCT if every job
 * ran alone on the empty 64-GPU cluster, two ways, beside 0.80 x Pollux's published average.
 * Run: npm run bench:policy-bounds.
 *
 * - oracle: each epoch at the best (GPUs, per-GPU batch, accumulation) by the true traces, plus
 *   the one 30 s start-up delay; no exploration, no other restart, no wait for a round. A true
 *   lower bound of any policy's JCT for the job in this simulator.
 * - alone: the job simulated alone under `goodput` (exploration from 1 GPU, fitted models,
 *   restarts, 60 s rounds): what the policy achieves with no contention at all.
 * - alone with profile: the same for the third job of its application run alone after two
 *   earlier ones, starting from the profile they left (issue #18).
 * Both are per application (every job of an application is the same job in these traces).
 */
import { GoodputPolicy } from '../src/policy/goodput/index.js';
import { applicationNames, getApplication, type TraceApplication } from '../src/sim/application.js';
import { RESTART_DELAY_S } from '../src/sim/sim-job.js';
import { simulate } from '../src/sim/simulator.js';
import { defaultTracesDir, loadWorkload, type WorkloadJob } from '../src/sim/workload.js';
import { publishedResults, workloadFile } from './pollux-data.js';
import { benchArgs } from './bench-args.js';

benchArgs(
  `
usage: npm run bench:policy-bounds
Average JCT per (load, workload) if every job ran alone on the empty cluster, beside 0.80 x Pollux's published average.
`,
  {},
);

const TARGET_RATIO = 0.8;
const MAX_ACCUM_STEPS = 20;
const BATCH_GRID_POINTS = 100;

/** Best progress rate (B0-iterations/s) of `app` during `epoch` on up to `maxGpus` GPUs. */
function bestRate(app: TraceApplication, epoch: number, maxGpus: number, fixedBatch: number | undefined): number {
  let best = 0;
  const batchStep = Math.max(1, Math.floor((app.max_local_bsz - app.min_local_bsz) / BATCH_GRID_POINTS));
  for (let r = 1; r <= maxGpus; r++) {
    const placement = Array.from({ length: Math.ceil(r / 4) }, (_, i) => Math.min(4, r - 4 * i));
    const locals: number[] = [];
    for (let b = app.min_local_bsz; b <= app.max_local_bsz; b += batchStep) locals.push(b);
    if (fixedBatch !== undefined)
      locals.push(...Array.from({ length: MAX_ACCUM_STEPS + 1 }, (_, a) => fixedBatch / (r * (a + 1))));
    for (const b of locals) {
      if (b < app.min_local_bsz || b > app.max_local_bsz) continue;
      let stepSync: readonly [number, number];
      try {
        stepSync = app.throughput(placement, b);
      } catch {
        continue; // outside the measured batch range of this placement
      }
      const [step, sync] = stepSync;
      for (let a = 0; a <= MAX_ACCUM_STEPS; a++) {
        const batch = r * b * (a + 1);
        if (batch > app.max_batch_size) break;
        if (batch < app.init_batch_size || (fixedBatch !== undefined && Math.abs(batch - fixedBatch) > 1e-6)) continue;
        const [sqr, variance] = app.gradStats(batch, epoch);
        const gain = (variance + sqr) / (variance / (batch / app.init_batch_size) + sqr);
        best = Math.max(best, gain / (step + (step - sync) * a));
      }
    }
  }
  return best;
}

function oracleJct(app: TraceApplication): number {
  // ncf runs at a fixed 32768 on one GPU, as in the acceptance runs.
  const [maxGpus, fixed] = app.name === 'ncf' ? [1, 32768] : [64, undefined];
  let total_s = RESTART_DELAY_S;
  for (let epoch = 0; epoch <= app.completion_epoch; epoch++) {
    total_s += (app.progressAt(epoch + 1) - app.progressAt(epoch)) / bestRate(app, epoch, maxGpus, fixed);
  }
  return total_s;
}

/** Far enough apart that each job of a sequence runs alone. */
const SEQUENCE_GAP_S = 1_000_000;

/**
 * JCTs of three jobs of `job`'s application run one after the other on the empty cluster under
 * goodput: the first starts from nothing; the later ones start from the profile their key's
 * earlier jobs left (issue #18), or from nothing as well with profiles=false.
 */
function aloneJcts(job: WorkloadJob, profiles: boolean): number[] {
  const jobs = [0, 1, 2].map((i) => ({ ...job, name: `${job.name}-${i}`, submit_s: i * SEQUENCE_GAP_S }));
  return simulate({ file: 'alone', jobs }, 'goodput', new GoodputPolicy({ profiles })).jobs.map((j) => j.jct_s);
}

const published = publishedResults();
const oracle = new Map(applicationNames.map((name) => [name, oracleJct(getApplication(name, defaultTracesDir())!)]));
const alone = new Map<string, number>();
const aloneProfiled = new Map<string, number>();
console.log(`per job, s: ${applicationNames.map((a) => `${a} oracle ${oracle.get(a)!.toFixed(0)}`).join(', ')}`);
console.log('load  w  oracle avg  alone avg  alone with profile avg  0.80 x published  target above alone?');
for (const load of ['0.5', '1.0', '1.5', '2.0']) {
  for (const k of [1, 2, 3, 4]) {
    const workload = loadWorkload(workloadFile(load, k));
    let oracleSum = 0;
    let aloneSum = 0;
    let profiledSum = 0;
    for (const job of workload.jobs) {
      const app = job.application.name;
      if (!alone.has(app)) {
        alone.set(app, aloneJcts(job, false)[0]!);
        aloneProfiled.set(app, aloneJcts(job, true)[2]!);
      }
      oracleSum += oracle.get(app)!;
      aloneSum += alone.get(app)!;
      profiledSum += aloneProfiled.get(app)!;
    }
    const n = workload.jobs.length;
    const target = TARGET_RATIO * published[`pollux-${load}`]!.avg_jct_s[`workload-${k}`]!;
    console.log(
      `${load}  ${k}  ${(oracleSum / n).toFixed(0).padStart(10)}  ${(aloneSum / n).toFixed(0).padStart(9)}  ${(profiledSum / n).toFixed(0).padStart(22)}  ${target.toFixed(0).padStart(16)}  ${target > aloneSum / n ? 'yes' : 'NO'}`,
    );
  }
}
console.log(`per job alone under goodput, s: ${[...alone].map(([a, t]) => `${a} ${t}`).join(', ')}`);
console.log(
  `the same, third job of its key (profile from two earlier jobs), s: ${[...aloneProfiled].map(([a, t]) => `${a} ${t}`).join(', ')}`,
);
