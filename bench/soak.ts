/**
 * `npm run bench:soak`: a bounded soak of a real `goodput up` (separate process, 2 CPU slots,
 * loopback only) through the failures of a control plane's life, then the count of what went
 * wrong. Phases: a store of 5,000 finished jobs; report latency alone and under listing clients
 * (paging `GET /v1/jobs`); the data directory's disk full and freed (a 64 MiB tmpfs when run as
 * root; skipped otherwise); kill -9 of replicas; kill -9 of the server and a restart; jobs that
 * leave `setsid` children behind. Prints jobs lost (acknowledged, not stored), jobs stuck (not
 * ended when everything should have), slots leaked (devices held with no job), escaped
 * processes (a job's processes alive after it ended), report p99 under listing load, and the
 * server's RSS at start and end. Targets: 0 / 0 / 0 / 0 and p99 <= 50 ms.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { markedProcesses } from '../src/backends/local/containment.js';
import type { JobSummary } from '../src/client/client.js';
import { jobToken } from '../src/control/tokens.js';
import { jobSpecFixture } from '../src/store/job-fixture.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { benchArgs } from './bench-args.js';
import { sleep, startUp, timedCall, waitFor, type UpServer } from './soak/server.js';
import { slurmPartitionFaults, slurmPartitionLines } from './soak/slurm-partition.js';

const args = benchArgs(
  `
usage: npm run bench:soak [-- --jobs N] [-- --load-s S] [-- --big-store] [-- --flood] [-- --faults slurm-partition]
A bounded soak of a real 'goodput up' (about 3 minutes): disk full and freed, kill -9 of the server
and of replicas, a 5,000-job store with listing clients, setsid children. Prints jobs lost, jobs
stuck, slots leaked, escaped processes (targets 0), report p99 under listing load (<= 50 ms), RSS.
  --jobs N     finished jobs in the store (default 5000)
  --load-s S   seconds of each report-latency measurement (default 8)
  --big-store  only the 40,000-job store under three dashboard tabs (bench/soak/big-store.ts)
  --flood      only one user's flood of 10,000 submits (bench/soak/flood.ts)
  --faults slurm-partition   instead: a drained, then a DOWN partition on a real test Slurm
               cluster (root and slurm-wlm; about 2 minutes); prints per fault jobs failed, stuck,
               not resumed, hung, shown running while held, GPUs allocated while held (target 0),
               and running jobs stopped by a rescale decided while drained (target 0)
`,
  {
    jobs: { type: 'string' },
    'load-s': { type: 'string' },
    'big-store': { type: 'boolean' },
    flood: { type: 'boolean' },
    faults: { type: 'string' },
    'input-faults': { type: 'boolean' },
  },
);
if (args['input-faults']) process.exit(await (await import('./soak/input-faults.js')).runInputFaults());

if (args['big-store'] || args.flood) {
  const { runStoreDay } = await import('./soak/store-day.js');
  process.exit(
    await runStoreDay({
      big_store: args['big-store'] === true,
      flood: args.flood === true,
      store_jobs: Number(args.jobs ?? 40_000),
      flood_submits: 10_000,
    }),
  );
}

if (args.faults !== undefined) {
  if (args.faults !== 'slurm-partition') {
    console.error(`error: --faults: unknown fault group '${args.faults}' (known: slurm-partition)`);
    process.exit(2);
  }
  const t0 = performance.now();
  console.log(
    'bench:soak --faults slurm-partition  real slurmctld + 2 slurmd (8 fake GPUs), real goodput up --backend slurm',
  );
  for (const line of slurmPartitionLines(await slurmPartitionFaults())) console.log(line);
  console.log(`  (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  process.exit(0);
}

const STORED_JOBS = Number(args.jobs ?? 5000);
const LOAD_S = Number(args['load-s'] ?? 8);
const TARGET_P99_MS = 50;
const REPORTERS = 8;
const LISTERS = 2;
type Server = UpServer;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One report (POST with a body) or listing (GET) through the keep-alive agent: status and time. */
const call = (url: URL, path: string, token: string, body?: string) =>
  timedCall(agent, url, body ? 'POST' : 'GET', path, token, body);

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function startServer(data_dir: string, log_dir: string, port: number): Promise<Server> {
  return startUp(data_dir, { log_file: join(log_dir, 'up.log'), interval_s: 2, port, timeout_ms: 60_000 });
}

/** Report latency (p99, ms) of REPORTERS closed loops for LOAD_S seconds, with `listers` listing loops beside them. */
async function reportP99(
  server: Server,
  jobs: readonly JobSummary[],
  secret: string,
  listers: number,
): Promise<{ p99_ms: number; reports: number; errors: number; listings: number }> {
  const url = new URL(server.url);
  const admin = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const end = performance.now() + LOAD_S * 1000;
  const latencies: number[] = [];
  let errors = 0;
  let listings = 0;
  const reporter = async (k: number) => {
    const job = jobs[k % jobs.length]!;
    const token = jobToken(secret, job.id);
    for (let step = 1; performance.now() < end; step++) {
      const body = JSON.stringify({
        attempt: 0,
        reports: [
          {
            time_s: Date.now() / 1000,
            step,
            num_nodes: 1,
            num_replicas: 1,
            local_bsz: 32,
            accum_steps: 0,
            step_time_s: 0.05,
            sync_time_s: 0,
            grad_sqr: 1,
            grad_var: 2,
            samples: step * 32,
          },
        ],
      });
      const r = await call(url, `/v1/jobs/${job.id}/reports`, token, body);
      if (r.status !== 200) errors++;
      latencies.push(r.ms);
    }
  };
  const lister = async (k: number) => {
    while (performance.now() < end) {
      // One client walks every page of the whole store, the other asks for the biggest page.
      let cursor: string | null = '';
      if (k % 2 === 0) {
        while (cursor !== null && performance.now() < end) {
          const page = await server.client.listJobsPage({ limit: 100, ...(cursor ? { cursor } : {}) });
          cursor = page.next_cursor;
          listings++;
        }
      } else {
        await call(url, '/v1/jobs?limit=1000&state=finished', admin);
        listings++;
      }
    }
  };
  await Promise.all([
    ...Array.from({ length: REPORTERS }, (_, k) => reporter(k)),
    ...Array.from({ length: listers }, (_, k) => lister(k)),
  ]);
  latencies.sort((a, b) => a - b);
  return { p99_ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN, reports: latencies.length, errors, listings };
}

function fill(dir: string): string {
  const path = join(dir, 'ballast');
  const fd = openSync(path, 'w');
  for (const size of [1 << 20, 64 << 10, 4 << 10]) {
    const chunk = Buffer.alloc(size);
    try {
      for (;;) writeSync(fd, chunk);
    } catch {
      // full at this size
    }
  }
  closeSync(fd);
  return path;
}

/** Pids of live processes (not zombies) that carry the environment of one of `ids`' replicas, any attempt. */
function escapedProcesses(ids: readonly string[], attempts = 4): number[] {
  return ids
    .flatMap((id) => Array.from({ length: attempts }, (_, a) => markedProcesses(id, a)))
    .flat()
    .filter((pid) => {
      try {
        return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
      } catch {
        return false;
      }
    });
}

const root = process.getuid?.() === 0;
const base = mkdtempSync(join(tmpdir(), 'goodput-soak-'));
const logDir = mkdtempSync(join(tmpdir(), 'goodput-soak-log-'));
let mounted = false;
if (root) {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', base]);
    mounted = true;
  } catch {
    // no tmpfs: the disk-full phase is skipped
  }
}
const dataDir = join(base, 'data');
mkdirSync(dataDir, { mode: 0o700 });
const servers: number[] = [];
const acknowledged = new Set<string>();
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  console.log(line);
};

try {
  const t0 = performance.now();
  // 1. A large store: finished jobs written through the store before the server starts.
  const store = new SqliteStore(join(dataDir, 'goodput.sqlite'), { background_checkpoint_ms: 0 });
  const spec = jobSpecFixture({ name: 'old' });
  for (let i = 0; i < STORED_JOBS; i++) {
    const id = `old${String(i).padStart(5, '0')}`;
    await store.createJob({ id, name: `old-${i % 50}`, user: i % 3 === 0 ? 'alice' : 'bob', spec }, 'soak');
    await store.finishJob(id, i % 7 === 0 ? 'failed' : 'succeeded', 'soak', 'soak');
  }
  await store.close();
  let server = await startServer(dataDir, logDir, 0);
  servers.push(server.pid);
  const port = Number(new URL(server.url).port);
  const rssStart = rssMiB(server.pid);
  const secret = readFileSync(join(dataDir, 'secret'), 'utf8').trim();
  const c = () => server.client;
  say(
    `bench:soak  real 'goodput up' on ${server.url}, 2 CPU slots, ${STORED_JOBS} finished jobs stored, data dir on ${mounted ? 'a 64 MiB tmpfs' : 'the temp dir (not root: no disk-full phase)'}`,
  );

  // 2. Report latency alone, then beside listing clients (8 sleeping jobs report: 2 run, 6 wait).
  const reporters: JobSummary[] = [];
  for (let k = 0; k < REPORTERS; k++) {
    const j = await c().submit({ name: `reporter-${k}`, command: ['sleep', '600'], workdir: '/tmp' });
    acknowledged.add(j.id);
    reporters.push(j);
  }
  await sleep(1500);
  const alone = await reportP99(server, reporters, secret, 0);
  const listing = await reportP99(server, reporters, secret, LISTERS);
  say(`  report p99 alone          ${alone.p99_ms.toFixed(1)} ms (${alone.reports} reports, ${alone.errors} errors)`);
  say(
    `  report p99 under listing  ${listing.p99_ms.toFixed(1)} ms (${listing.reports} reports, ${listing.errors} errors; ${listing.listings} listing requests by ${LISTERS} clients)   target <= ${TARGET_P99_MS} ms: ${listing.p99_ms <= TARGET_P99_MS ? 'MET' : 'NOT MET'}`,
  );
  for (const j of reporters) await c().cancel(j.id);

  // 3. Disk full and freed: submits during it either exist or were refused; launches wait.
  if (mounted) {
    const writer = await c().submit({ name: 'before-full', command: ['sh', '-c', 'sleep 3'], workdir: '/tmp' });
    acknowledged.add(writer.id);
    await waitFor('before-full to run', 30_000, async () => (await c().getJob(writer.id)).state === 'running');
    const ballast = fill(base);
    const health = (await fetch(`${server.url}/v1/health`)).status;
    let refused = 0;
    for (let k = 0; k < 4; k++) {
      await c()
        .submit({ name: `while-full-${k}`, command: ['sh', '-c', 'sleep 1'], workdir: '/tmp' })
        .then(
          (j) => acknowledged.add(j.id),
          () => refused++,
        );
    }
    await sleep(5000);
    const failedWhileFull = (await c().listJobs({ state: 'failed', since: '10m' })).filter(
      (j) => !j.id.startsWith('old'),
    ).length;
    rmSync(ballast);
    say(
      `  disk full: health ${health} while full, ${4 - refused} of 4 submits acknowledged, ${refused} refused, ${failedWhileFull} jobs failed while full; space freed`,
    );
  }

  // 4. kill -9 of a replica (once, after its early-failure window) and of the server mid-run.
  const victim = await c().submit({
    name: 'kill-replica',
    command: ['sh', '-c', 'sleep 14'],
    workdir: '/tmp',
    max_restarts: 3,
  });
  acknowledged.add(victim.id);
  const v = await waitFor('kill-replica to run', 30_000, async () => {
    const j = await c().getJob(victim.id);
    return j.state === 'running' && j.current_replicas[0] ? j : undefined;
  });
  await sleep(11_000);
  process.kill(v.current_replicas[0]!.pid, 'SIGKILL');
  const survivor = await c().submit({ name: 'across-server-kill', command: ['sh', '-c', 'sleep 6'], workdir: '/tmp' });
  acknowledged.add(survivor.id);
  await sleep(2000);
  process.kill(server.pid, 'SIGKILL');
  await sleep(500);
  server = await startServer(dataDir, logDir, port);
  servers.push(server.pid);
  say(`  kill -9: a replica of kill-replica 11 s after its launch, then the server (restarted on port ${port})`);

  // 5. Jobs that leave setsid children and double-forked ones behind.
  const leavers: string[] = [];
  for (let k = 0; k < 3; k++) {
    const j = await c().submit({
      name: `setsid-${k}`,
      command: ['sh', '-c', 'setsid sleep 300 & (sleep 300 &) ; sleep 1'],
      workdir: '/tmp',
    });
    acknowledged.add(j.id);
    leavers.push(j.id);
  }

  // 6. Everything should now end by itself; then count.
  const ended = (j: JobSummary) => ['succeeded', 'failed', 'cancelled'].includes(j.state);
  const mine = async () => (await c().listJobs({ since: '1h' })).filter((j) => !j.id.startsWith('old'));
  await waitFor('every job to end', 90_000, async () => (await mine()).every(ended)).catch(() => undefined);
  await sleep(3000);
  const jobs = await mine();
  const stored = new Set(jobs.map((j) => j.id));
  const lost = [...acknowledged].filter((id) => !stored.has(id));
  const stuck = jobs.filter((j) => !ended(j));
  const nodes = await c().nodes();
  const leaked = nodes.flatMap((n) => n.devices).filter((d) => d.busy).length;
  const escaped = escapedProcesses([...acknowledged]);
  const notOk = jobs.filter((j) => j.state !== 'succeeded' && !j.name.startsWith('reporter-'));
  const rssEnd = rssMiB(server.pid);
  say(
    `  jobs: ${jobs.length} of this soak; ${jobs.filter((j) => j.state === 'succeeded').length} succeeded, ${jobs.filter((j) => j.state === 'cancelled').length} cancelled (the reporters), ${jobs.filter((j) => j.state === 'failed').length} failed${notOk.length ? `: ${notOk.map((j) => `${j.name} ${j.state} (${j.reason})`).join('; ')}` : ''}`,
  );
  const ok =
    lost.length === 0 && stuck.length === 0 && leaked === 0 && escaped.length === 0 && listing.p99_ms <= TARGET_P99_MS;
  say(
    `  jobs lost ${lost.length}   jobs stuck ${stuck.length}   slots leaked ${leaked}   escaped processes ${escaped.length}   report p99 under listing ${listing.p99_ms.toFixed(1)} ms   RSS ${rssStart.toFixed(0)} MiB at start, ${rssEnd.toFixed(0)} MiB at end (after the restart)`,
  );
  say(
    `  targets 0 / 0 / 0 / 0 and p99 <= ${TARGET_P99_MS} ms: ${ok ? 'MET' : 'NOT MET'}   (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
  );
  for (const pid of escaped) process.kill(pid, 'SIGKILL');
} finally {
  agent.destroy();
  for (const pid of servers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await sleep(300);
  if (mounted) execFileSync('umount', ['-l', base]);
  rmSync(base, { recursive: true, force: true });
  rmSync(logDir, { recursive: true, force: true });
}
