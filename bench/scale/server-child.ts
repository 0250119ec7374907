/**
 * The server of bench:scale's server part, in a process of its own (bench/scale/server-bench.ts
 * starts it): the real composition root (server/server.ts: store, API, controller, policy) and the
 * live dashboard, on a FakeBackend of NODES x GPUS devices whose running replicas are those the
 * fixture wrote (read from SEEDS). Prints one JSON line per event on stdout: `{"ready": ...}` once
 * it serves (with the time its start took), then `{"round": ...}` after every scheduling round.
 * Usage: node server-child.js DATA_DIR SEEDS NODES GPUS POLICY INTERVAL_S POLICY_THREAD
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendNode } from '../../src/backends/backend.js';
import { FakeBackend, FakeCluster } from '../../src/backends/fake-backend.js';
import { startLiveDashboard } from '../../src/dashboard/live.js';
import type { PolicyThreadMode } from '../../src/server/server-policy.js';
import { startServer } from '../../src/server/server.js';
import { systemClock } from '../../src/util/clock.js';
import { nodeName, type SeededReplica } from './seeded-cluster.js';

const [data_dir, seedsFile, nodesArg, gpusArg, policy, intervalArg, policyThread] = process.argv.slice(2);
const loaded_ms = performance.now();
const nodes: BackendNode[] = Array.from({ length: Number(nodesArg) }, (_, n) => ({
  name: nodeName(n),
  address: '127.0.0.1',
  usable: Number(gpusArg),
  note: '',
  devices: Array.from({ length: Number(gpusArg) }, (_, index) => ({
    index,
    kind: 'gpu' as const,
    name: 'NVIDIA H100 80GB HBM3',
  })),
}));
const cluster = new FakeCluster(nodes, systemClock, true);
for (const r of JSON.parse(readFileSync(seedsFile!, 'utf8')) as SeededReplica[])
  cluster.seed(r.job_id, r.attempt, r.rank, r.node);
const logFile = join(data_dir!, 'up.log');
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const server = await startServer({
  data_dir: data_dir!,
  host: '127.0.0.1',
  port: 0,
  devices: [],
  backend: new FakeBackend(cluster),
  policy: policy!,
  policy_thread: policyThread as PolicyThreadMode,
  interval_s: Number(intervalArg),
  grace_s: 2,
  log: (line) => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`),
});
const started_ms = performance.now() - t0;
const startCpu = process.cpuUsage(cpu0);
const dashboard = await startLiveDashboard(server, data_dir!, '127.0.0.1', 0);
console.log(
  JSON.stringify({
    ready: {
      url: server.url,
      dashboard_url: dashboard.url,
      start_ms: started_ms,
      start_cpu_ms: (startCpu.user + startCpu.system) / 1000,
      dashboard_ms: performance.now() - t0 - started_ms,
      modules_ms: loaded_ms,
      since_process_ms: performance.now(),
    },
  }),
);
// One line per round (the counters change once a round has ended).
let seen = server.controller.stats.rounds_total;
setInterval(() => {
  const s = server.controller.stats;
  if (s.rounds_total === seen) return;
  seen = s.rounds_total;
  const ms = (x: number) => Math.round(x * 10_000) / 10;
  console.log(
    JSON.stringify({
      round: {
        n: s.rounds_total,
        total_ms: ms(s.last_round_s),
        cpu_ms: ms(s.last_round_cpu_s),
        snapshot_ms: ms(s.last_snapshot_s),
        decide_ms: ms(s.last_decide_s),
        apply_ms: ms(s.last_apply_s),
      },
    }),
  );
}, 10);
// The event loop's blocks: a tick of 10 ms that comes over 50 ms late is a block a report waited behind.
let tick_ms = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - tick_ms > 60) console.log(JSON.stringify({ block: { ms: Math.round(now - tick_ms - 10) } }));
  tick_ms = now;
}, 10);
process.once('SIGTERM', () => {
  void dashboard
    .close()
    .then(() => server.close())
    .then(() => process.exit(0));
});
