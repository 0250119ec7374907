/**
 * `npm run bench:doctor-live`: issue #50's injected rank faults against a real `goodput up`
 * (temp data dir, local backend, 4 CPU slots, real torch with gloo, 3 ranks):
 *  - stragglers: one rank made slow (sleep in the step, sleep after optimizer.step(), a slow
 *    dataset, a busy thread beside it), the rank cycling: right rank named, time from steady
 *    reports to the verdict (target 10/10 within 15 s);
 *  - hangs: one rank SIGSTOPped after steady reports: right rank named, time from the stop to the
 *    `rank-hung` event (target 10/10 within 60 s) and to the job running again past its
 *    checkpoint without that device (target 90 s);
 *  - healthy runs of `--healthy-s` each: verdicts seen are false alarms (target 0 over 10 x 120 s).
 *
 *   node dist/bench/doctor-live.js [--stragglers 10] [--hangs 10] [--healthy 10] [--healthy-s 120]
 */
import { cleanup, startServerProcess, tempDataDir } from '../test-support/control/harness.js';
import { pythonWith } from '../test-support/control/python.js';
import {
  hangScenario,
  healthyScenario,
  stragglerScenario,
  type ScenarioResult,
  type SlowPhase,
} from '../test-support/ranks/rank-scenarios.js';
import { benchArgs } from './bench-args.js';

const USAGE = `
usage: node dist/bench/doctor-live.js [--stragglers 10] [--hangs 10] [--healthy 10] [--healthy-s 120]
       [--slow-ms 150] [--replicas 3]
Injected rank faults on the local backend, 3 gloo ranks of real torch (npm run bench:doctor-live).
`;
const values = benchArgs(USAGE, {
  stragglers: { type: 'string', default: '10' },
  hangs: { type: 'string', default: '10' },
  healthy: { type: 'string', default: '10' },
  'healthy-s': { type: 'string', default: '120' },
  'slow-ms': { type: 'string', default: '150' },
  replicas: { type: 'string', default: '3' },
});
const count = (k: keyof typeof values) => Number(values[k]);
const python = pythonWith(['torch']);
if (!python) {
  console.error('bench:doctor-live: no Python with torch (apt-get install python3-torch)');
  process.exit(1);
}
const replicas = count('replicas');
const data_dir = tempDataDir();
const server = await startServerProcess(data_dir, ['--cpu-slots', String(replicas + 1), '--interval-s', '1']);
const phases: SlowPhase[] = ['compute', 'between', 'data', 'hog'];
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
    const r = await hangScenario(server.client, python, { replicas, rank, limit_s: 90, resume_limit_s: 120 });
    hangs.push(r);
    console.log(
      `hang ${i + 1} (rank ${rank}): named ${r.named ?? '-'} after ${fmt(r.time_s)} s, ` +
        `resumed after ${fmt(r.resume_s)} s  ${r.line.slice(0, 300)}`,
    );
  }
  const healthy: ScenarioResult[] = [];
  for (let i = 0; i < count('healthy'); i++) {
    const r = await healthyScenario(server.client, python, { replicas, seconds: count('healthy-s') });
    healthy.push(r);
    console.log(`healthy ${i + 1} (${count('healthy-s')} s): ${r.alarms} false alarm(s) ${r.line}`);
  }
  console.log('\n== bench:doctor-live (local backend, %d gloo ranks on CPU slots) ==', replicas);
  if (stragglers.length) summary('stragglers', stragglers, 15);
  if (hangs.length) {
    summary('hangs', hangs, 60);
    const resumed = hangs.filter((r) => r.resume_s !== null && r.resume_s <= 90).length;
    console.log(`hangs: resumed past the checkpoint without the device within 90 s in ${resumed}/${hangs.length}`);
  }
  if (healthy.length)
    console.log(
      `healthy: ${healthy.reduce((n, r) => n + r.alarms, 0)} false alarm(s) ` +
        `over ${healthy.length} runs of ${count('healthy-s')} s`,
    );
} finally {
  await cleanup(data_dir, [server]);
}
