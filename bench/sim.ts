/**
 * Simulator speed: wall time to simulate one 160-job workload (workload-1 at load 1.0) per
 * policy, with the target beside it (pollux <= 60 s, others <= 5 s). Run: npm run bench:sim.
 * Each policy runs once in this process (trace loading happens in the first run and is
 * reported separately).
 */
import { policyNames, findPolicy } from '../src/policy/registry.js';
import { getApplication } from '../src/sim/application.js';
import { ndInterpTable } from '../src/sim/nd-table.js';
import { simulate } from '../src/sim/simulator.js';
import { defaultTracesDir, loadWorkload } from '../src/sim/workload.js';
import { packagePath } from '../src/util/package-root.js';
import { benchArgs } from './bench-args.js';

benchArgs(
  `
usage: npm run bench:sim
Wall time to simulate workload-1 at load 1.0 per policy (pollux <= 60 s, others <= 5 s).
`,
  {},
);

const file = packagePath('data', 'pollux', 'workloads', 'workload-1.csv');
const targets: Record<string, number> = { pollux: 60, goodput: 60 };
const wanted = ['fifo', 'tiresias', 'optimus', 'pollux', 'goodput'].filter((p) => policyNames().includes(p));

let t = performance.now();
for (const app of ['bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3'])
  getApplication(app, defaultTracesDir());
ndInterpTable();
const workload = loadWorkload(file);
console.log(`trace + workload loading: ${((performance.now() - t) / 1000).toFixed(2)} s`);
console.log('policy     wall s  target s  rounds  avg JCT s  status');
for (const name of wanted) {
  t = performance.now();
  const result = simulate(workload, name, findPolicy(name)!.create({ seed: 1 }));
  const wall = (performance.now() - t) / 1000;
  const target = targets[name] ?? 5;
  const avg = result.jobs.reduce((s, j) => s + j.jct_s, 0) / result.jobs.length;
  console.log(
    `${name.padEnd(9)} ${wall.toFixed(2).padStart(7)} ${String(target).padStart(9)} ${String(result.rounds).padStart(7)} ${avg.toFixed(1).padStart(10)}  ${wall <= target ? 'ok' : 'SLOW'}`,
  );
}
