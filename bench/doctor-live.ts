/**
 * `npm run bench:doctor-live`: issue #50's injected rank faults against a real `goodput up`
 * (temp data dir; the local backend on CPU slots, or `--backend slurm` on the Slurm test cluster:
 * 2 nodes of 4 fake GPUs, slurm-cluster.ts; real torch with gloo, 3 ranks):
 *  - stragglers: one rank made slow (sleep in the step, sleep after optimizer.step(), a slow
 *    dataset, a busy thread beside it, busy processes pinned to its core), the rank cycling: right
 *    rank named, time from steady reports to the verdict (target 10/10 within 15 s);
 *  - hangs: one rank stops itself (SIGSTOP) or blocks in a collective the others skipped, 12 s
 *    into its steps: right rank named, time from the hang to the `rank-hung` event (target 10/10
 *    within 60 s) and to the job running again past its checkpoint without that device (local) or
 *    node (Slurm) (target 90 s);
 *  - healthy runs of `--healthy-s` each: verdicts seen are false alarms (target 0 over 10 x 120 s).
 *
 *   node dist/bench/doctor-live.js [--backend local|slurm] [--stragglers 10] [--hangs 10] [--healthy 10]
 *     [--healthy-s 120]
 */
import { startSlurmCluster, slurmMissing, type SlurmCluster } from '../src/backends/slurm/testing/slurm-cluster.js';
import { cleanup, startServerProcess, tempDataDir } from '../test-support/control/harness.js';
import { pythonWith } from '../test-support/control/python.js';
import {
  hangScenario,
  healthyScenario,
  stragglerScenario,
  type HangKind,
  type ScenarioResult,
  type SlowPhase,
} from '../test-support/ranks/rank-scenarios.js';
import { benchArgs } from './bench-args.js';

const USAGE = `
usage: node dist/bench/doctor-live.js [--backend local|slurm] [--stragglers 10] [--hangs 10] [--healthy 10]
       [--healthy-s 120] [--slow-ms 150] [--replicas 3] [--phases compute,between,data,hog,hog-process]
       [--kinds stop,collective]
Injected rank faults on the local backend (CPU slots) or the Slurm test cluster (--backend slurm,
needs root and slurm-wlm), 3 gloo ranks of real torch (npm run bench:doctor-live).
`;
const values = benchArgs(USAGE, {
  backend: { type: 'string', default: 'local' },
  stragglers: { type: 'string', default: '10' },
  hangs: { type: 'string', default: '10' },
  healthy: { type: 'string', default: '10' },
  'healthy-s': { type: 'string', default: '120' },
  'slow-ms': { type: 'string', default: '150' },
  replicas: { type: 'string', default: '3' },
  phases: { type: 'string', default: 'compute,between,data,hog,hog-process' },
  kinds: { type: 'string', default: 'stop,collective' },
});
const backend = values.backend;
if (backend !== 'local' && backend !== 'slurm') {
  console.error(`error: --backend must be local or slurm, not ${backend}\n${USAGE}`);
  process.exit(2);
}
if (backend === 'slurm' && slurmMissing()) {
  console.error(`bench:doctor-live: no Slurm test cluster here: ${slurmMissing()}`);
  process.exit(1);
}
const count = (k: keyof typeof values) => Number(values[k]);
const python = pythonWith(['torch']);
if (!python) {
  console.error('bench:doctor-live: no Python with torch (apt-get install python3-torch)');
  process.exit(1);
}
const replicas = count('replicas');
const data_dir = tempDataDir();
let cluster: SlurmCluster | undefined;
if (backend === 'slurm') {
  cluster = await startSlurmCluster();
  process.env.SLURM_CONF = cluster.env.SLURM_CONF;
}
const server = await startServerProcess(
  data_dir,
  backend === 'slurm'
    ? ['--backend', 'slurm', '--interval-s', '1', '--grace-s', '5']
    : ['--cpu-slots', String(replicas + 1), '--interval-s', '1'],
);
// Stragglers cycle through the phases and ranks, hangs through the kinds and ranks 1..n-1.
const phases = values.phases.split(',') as SlowPhase[];
const kinds = values.kinds.split(',') as HangKind[];
const fmt = (x: number | null) => (x === null ? '-' : x.toFixed(1));

function summary(name: string, rs: readonly ScenarioResult[], limit_s: number): void {
  const right = rs.filter((r) => r.named !== null && r.named === r.injected && r.time_s! <= limit_s);
  const times = rs.flatMap((r) => (r.time_s === null ? [] : [r.time_s])).sort((a, b) => a - b);
  const wrong = rs.filter((r) => r.named !== null && r.named !== r.injected).length;
  console.log(
    `${name}: right rank within ${limit_s} s in ${right.length}/${rs.length}; wrong rank ${wrong}; ` +
      `time to verdict median ${fmt(times[times.length >> 1] ?? null)} s, ` +
      `max ${fmt(times[times.length - 1] ?? null)} s`,
  );
}

try {
  const stragglers: ScenarioResult[] = [];
  for (let i = 0; i < count('stragglers'); i++) {
    const phase = phases[i % phases.length]!;
    const rank = i % replicas;
    const r = await stragglerScenario(server.client, python, {
      replicas,
      rank,
      phase,
      slow_ms: count('slow-ms'),
      limit_s: 30,
    });
    stragglers.push(r);
    console.log(
      `straggler ${i + 1} (rank ${rank}, ${phase}): named ${r.named ?? '-'} after ${fmt(r.time_s)} s  ${r.line}`,
    );
  }
  const hangs: ScenarioResult[] = [];
  for (let i = 0; i < count('hangs'); i++) {
    const rank = 1 + (i % (replicas - 1)); // rank 0 too hosts the rendezvous; any rank may hang
    const kind = kinds[Math.floor(i / (replicas - 1)) % kinds.length]!; // each kind on each rank
    const r = await hangScenario(server.client, python, {
      replicas,
      rank,
      kind,
      data_dir,
      limit_s: 90,
      resume_limit_s: 120,
    });
    hangs.push(r);
    console.log(
      `hang ${i + 1} (rank ${rank}, ${kind}): named ${r.named ?? '-'} after ${fmt(r.time_s)} s, ` +
        `resumed after ${fmt(r.resume_s)} s${r.avoided === false ? ' ON WHAT WAS DRAINED' : ''}  ` +
        `${r.line.slice(0, 300)}\n    events: ${r.timeline}`,
    );
  }
  const healthy: ScenarioResult[] = [];
  for (let i = 0; i < count('healthy'); i++) {
    const r = await healthyScenario(server.client, python, { replicas, seconds: count('healthy-s') });
    healthy.push(r);
    console.log(`healthy ${i + 1} (${count('healthy-s')} s): ${r.alarms} false alarm(s) ${r.line}`);
  }
  const where = backend === 'slurm' ? 'Slurm test cluster, 2 nodes of 4 fake GPUs' : 'local backend, CPU slots';
  console.log(`\n== bench:doctor-live (${where}; ${replicas} gloo ranks) ==`);
  if (stragglers.length) summary('stragglers', stragglers, 15);
  if (hangs.length) {
    summary('hangs', hangs, 60);
    const resumed = hangs.filter((r) => r.resume_s !== null && r.resume_s <= 90 && r.avoided === true).length;
    const without = backend === 'slurm' ? 'node' : 'device';
    console.log(`hangs: resumed past the checkpoint without the ${without} within 90 s in ${resumed}/${hangs.length}`);
  }
  if (healthy.length)
    console.log(
      `healthy: ${healthy.reduce((n, r) => n + r.alarms, 0)} false alarm(s) ` +
        `over ${healthy.length} runs of ${count('healthy-s')} s`,
    );
} finally {
  await cleanup(data_dir, [server]);
  await cluster?.stop();
}
