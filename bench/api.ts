/**
 * `npm run bench:api`: report throughput and latency of the control plane on loopback.
 * Starts a real `goodput up` (separate process, temp data dir, 1 CPU slot), creates jobs that
 * stay queued (min_replicas above the slots, so no process runs), then drives
 * POST /v1/jobs/{id}/reports with a bounded closed loop (fixed concurrency, fixed duration)
 * against 127.0.0.1 only. Prints reports/s and p50/p99 latency next to the target, and the
 * GET /v1/health figure of the same run as the HTTP baseline (no auth, no store).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { procCpu_s } from '../src/backends/local/process-info.js';
import { GoodputClient } from '../src/client/client.js';
import { jobToken } from '../src/control/tokens.js';
import { packagePath } from '../src/util/package-root.js';
import { benchArgs } from './bench-args.js';
import { limitsFixture } from '../src/goodput/testing/perf-fixture.js';

benchArgs(
  `
usage: npm run bench:api
Report throughput and latency of a real 'goodput up' on loopback (target >= 2000 reports/s at p99 <= 20 ms),
and the rank summaries of a 64-rank job (capacity, and the server's CPU at their real rate).
`,
  {},
);

const TARGET_RPS = 2000;
const TARGET_P99_MS = 20;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const JOBS = 8;
/** Largest WAL tolerated next to the store (SqliteStore keeps it bounded). */
const TARGET_WAL_MB = 64;

/** Size of a file in MiB; 0 when absent. */
function sizeMiB(path: string): number {
  try {
    return statSync(path).size / 2 ** 20;
  } catch {
    return 0;
  }
}

interface Result {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  /** Status and body of the first failed request, if any. */
  first_error?: string;
  count: number;
}

/** CPU seconds (user + system) a process has used, from /proc; NaN where unavailable. */
function cpuSeconds(pid: number): number {
  return procCpu_s(pid) ?? NaN;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** Status of one request, and the response body when it is not 200 (to name what failed). */
interface Answer {
  status: number;
  error_body?: string;
}

function post(url: URL, path: string, token: string | undefined, body: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = request(
      { host: url.hostname, port: url.port, path, method: body ? 'POST' : 'GET', headers, agent },
      (res) => {
        const status = res.statusCode ?? 0;
        let text = '';
        if (status === 200) res.resume();
        else res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve(status === 200 ? { status } : { status, error_body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function load(
  url: URL,
  next: (i: number) => { path: string; token?: string; body?: string },
  warmup_s: number,
): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let first_error: string | undefined;
  let i = 0;
  const start = performance.now();
  const measureFrom = start + warmup_s * 1000;
  const end = measureFrom + DURATION_S * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const r = next(i++);
      const t0 = performance.now();
      const answer = await post(url, r.path, r.token, r.body).catch((e: unknown): Answer => ({
        status: 0,
        error_body: (e as Error).message,
      }));
      const t1 = performance.now();
      if (t0 < measureFrom) continue;
      if (answer.status !== 200) {
        errors++;
        first_error ??= `${answer.status} ${answer.error_body ?? ''}`.trim();
      }
      latencies.push(t1 - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    rps: latencies.length / DURATION_S,
    p50_ms: q(0.5),
    p99_ms: q(0.99),
    errors,
    ...(first_error === undefined ? {} : { first_error }),
    count: latencies.length,
  };
}

/** Ranks of the simulated job, their summary interval (the SDK's default) and the paced run's length. */
const RANKS = 64;
const RANK_INTERVAL_S = 2;
const PACED_S = 10;

/**
 * RANKS ranks posting one summary each every RANK_INTERVAL_S (each rank's first post spread over
 * the interval) for PACED_S, and the same time idle before it: the server's CPU share of each.
 */
async function pacedRanks(
  url: URL,
  path: string,
  token: string,
  bodies: readonly string[],
  pid: number,
): Promise<{ posts: number; errors: number; p99_ms: number; cpu_share: number; idle_share: number }> {
  const c0 = cpuSeconds(pid);
  await new Promise((r) => setTimeout(r, PACED_S * 1000));
  const c1 = cpuSeconds(pid);
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  await Promise.all(
    bodies.map(async (body, rank) => {
      await new Promise((r) => setTimeout(r, (rank / bodies.length) * RANK_INTERVAL_S * 1000));
      for (let k = 0; performance.now() - start < PACED_S * 1000; k++) {
        const t0 = performance.now();
        const answer = await post(url, path, token, body).catch((): Answer => ({ status: 0 }));
        latencies.push(performance.now() - t0);
        if (answer.status !== 200) errors++;
        const next = start + (rank / bodies.length + k + 1) * RANK_INTERVAL_S * 1000;
        await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      }
    }),
  );
  const c2 = cpuSeconds(pid);
  latencies.sort((a, b) => a - b);
  return {
    posts: latencies.length,
    errors,
    p99_ms: latencies[Math.floor(0.99 * (latencies.length - 1))] ?? NaN,
    cpu_share: (c2 - c1) / ((performance.now() - start) / 1000),
    idle_share: (c1 - c0) / PACED_S,
  };
}

async function main(): Promise<void> {
  const data_dir = mkdtempSync(join(tmpdir(), 'goodput-bench-'));
  const cli = packagePath('dist', 'src', 'cli', 'main.js');
  const jobs: { id: string; token: string }[] = [];
  let client: GoodputClient | undefined;
  const server = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
      cli,
      'up',
      '--data-dir',
      data_dir,
      '--port',
      '0',
      '--cpu-slots',
      '1',
      '--interval-s',
      '60',
      '--policy',
      'fifo',
    ],
    { stdio: 'ignore', detached: true },
  );
  try {
    const info = join(data_dir, 'server.json');
    for (let k = 0; k < 200 && !existsSync(info); k++) await new Promise((r) => setTimeout(r, 50));
    const { url } = JSON.parse(readFileSync(info, 'utf8')) as { url: string };
    client = new GoodputClient(url, readFileSync(join(data_dir, 'admin-token'), 'utf8').trim());
    const secret = readFileSync(join(data_dir, 'secret'), 'utf8').trim();
    for (let j = 0; j < JOBS; j++) {
      // One slot: the first job runs (a sleep), the others stay queued; every job is active, so its
      // reports are accepted (an ended job's are refused), and max_replicas 4 admits every report.
      const job = await client.submit({
        name: `bench-${j}`,
        command: ['sleep', '600'],
        workdir: data_dir,
        max_replicas: 4,
      });
      jobs.push({ id: job.id, token: jobToken(secret, job.id) });
    }
    const limits = limitsFixture();
    const bodies = jobs.map((job, j) =>
      [1, 2, 3, 4]
        .flatMap((replicas) =>
          [32, 64, 128].map((bsz) =>
            JSON.stringify({
              attempt: 0,
              limits,
              reports: [
                {
                  time_s: 1.7e9,
                  step: j,
                  epoch: 1,
                  num_nodes: 1,
                  num_replicas: replicas,
                  local_bsz: bsz,
                  accum_steps: 0,
                  step_time_s: 0.02 + bsz * 0.001,
                  sync_time_s: 0.005 * replicas,
                  grad_sqr: 0.5,
                  grad_var: 2.0,
                  samples: 1000,
                  loss: 0.9,
                  breakdown: { data_wait_s: 0.001, forward_backward_s: 0.015, sync_s: 0.005, optimizer_s: 0.002 },
                },
              ],
            }),
          ),
        )
        .map((body) => ({ path: `/v1/jobs/${job.id}/reports`, token: job.token, body })),
    );
    const u = new URL(url);
    const wal = join(data_dir, 'goodput.sqlite-wal');
    let walPeak_mb = 0;
    const walTimer = setInterval(() => (walPeak_mb = Math.max(walPeak_mb, sizeMiB(wal))), 100);
    const cpu0 = cpuSeconds(server.pid!);
    const health = await load(u, () => ({ path: '/v1/health' }), 0.5);
    const cpu1 = cpuSeconds(server.pid!);
    const reports = await load(
      u,
      (i) => {
        const perJob = bodies[i % JOBS]!;
        return perJob[Math.floor(i / JOBS) % perJob.length]!;
      },
      1,
    );
    const cpu2 = cpuSeconds(server.pid!);
    clearInterval(walTimer);
    const walEnd_mb = sizeMiB(wal);
    walPeak_mb = Math.max(walPeak_mb, walEnd_mb);
    const ok = reports.rps >= TARGET_RPS && reports.p99_ms <= TARGET_P99_MS && reports.errors === 0;
    const f = (x: number) => x.toFixed(2);
    console.log(
      `bench:api  loopback ${url}, ${CONCURRENCY} concurrent connections, ${DURATION_S}s measured after 1s warm-up, ${JOBS} jobs`,
    );
    console.log(
      `  reports       ${reports.rps.toFixed(0).padStart(6)} reports/s   p50 ${f(reports.p50_ms)} ms   p99 ${f(reports.p99_ms)} ms   errors ${reports.errors}/${reports.count}   target >= ${TARGET_RPS}/s at p99 <= ${TARGET_P99_MS} ms: ${ok ? 'MET' : 'NOT MET'}`,
    );
    if (reports.first_error !== undefined) console.log(`  first error   ${reports.first_error.slice(0, 300)}`);
    console.log(
      `  baseline      ${health.rps.toFixed(0).padStart(6)} requests/s  p50 ${f(health.p50_ms)} ms   p99 ${f(health.p99_ms)} ms   (GET /v1/health: HTTP only, no auth, no store)`,
    );
    // Server CPU per request (includes the warm-up requests): a figure that stays meaningful when
    // other processes compete for the cores; 1e6 / us = what one fully available core sustains.
    const perReport_us = ((cpu2 - cpu1) * 1e6) / (reports.count * (1 + 1 / DURATION_S));
    const perHealth_us = ((cpu1 - cpu0) * 1e6) / (health.count * (1 + 0.5 / DURATION_S));
    console.log(
      `  server CPU    ${perReport_us.toFixed(0)} us per report (one free core: ~${(1e6 / perReport_us).toFixed(0)} reports/s); ${perHealth_us.toFixed(0)} us per health request`,
    );
    // Rank summaries (issue #50): every rank of an SDK job posts one every 2 s. The running job
    // (jobs[0]) stands for a job of RANKS ranks: capacity of the route, then the paced load of
    // RANKS ranks at their real rate, as the server's CPU share.
    const rankBody = (rank: number) =>
      JSON.stringify({
        attempt: 0,
        rank,
        window: {
          steps: 20,
          data_wait_s: 0.02,
          compute_s: 1.6,
          sync_s: 0.3,
          between_s: 0.04,
          step: 100,
          phase: 'step',
          phase_s: 0.03,
        },
      });
    const rankPath = `/v1/jobs/${jobs[0]!.id}/ranks`;
    const rankBodies = Array.from({ length: RANKS }, (_, r) => rankBody(r));
    const cpu3 = cpuSeconds(server.pid!);
    const ranks = await load(u, (i) => ({ path: rankPath, token: jobs[0]!.token, body: rankBodies[i % RANKS]! }), 1);
    const cpu4 = cpuSeconds(server.pid!);
    const perRank_us = ((cpu4 - cpu3) * 1e6) / (ranks.count * (1 + 1 / DURATION_S));
    console.log(
      `  rank summary  ${ranks.rps.toFixed(0).padStart(6)} posts/s     p50 ${f(ranks.p50_ms)} ms   ` +
        `p99 ${f(ranks.p99_ms)} ms   errors ${ranks.errors}/${ranks.count}; ` +
        `${perRank_us.toFixed(0)} us server CPU each`,
    );
    if (ranks.first_error !== undefined) console.log(`  first error   ${ranks.first_error.slice(0, 300)}`);
    const paced = await pacedRanks(u, rankPath, jobs[0]!.token, rankBodies, server.pid!);
    console.log(
      `  ${RANKS} ranks     one summary per rank every ${RANK_INTERVAL_S} s for ${PACED_S} s: ` +
        `${paced.posts} posts (${(paced.posts / PACED_S).toFixed(0)}/s), errors ${paced.errors}, ` +
        `p99 ${f(paced.p99_ms)} ms, server CPU ${(100 * paced.cpu_share).toFixed(1)}% of one core ` +
        `(idle server over the same time: ${(100 * paced.idle_share).toFixed(1)}%)`,
    );
    const metrics = await client.metrics();
    const stored = /^goodput_reports_total (\d+)$/m.exec(metrics)?.[1];
    console.log(`  server counted ${stored} stored measurements`);
    const walOk = walPeak_mb < TARGET_WAL_MB;
    console.log(
      `  WAL           ${walEnd_mb.toFixed(1)} MiB at the end, ${walPeak_mb.toFixed(1)} MiB at most (sampled every 0.1 s); database ${sizeMiB(join(data_dir, 'goodput.sqlite')).toFixed(1)} MiB   target < ${TARGET_WAL_MB} MiB: ${walOk ? 'MET' : 'NOT MET'}`,
    );
  } finally {
    // The running job's replica outlives the server by design: cancel every job first.
    for (const job of jobs) await client?.cancel(job.id).catch(() => undefined);
    try {
      process.kill(-server.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    agent.destroy();
    await new Promise((r) => setTimeout(r, 300));
    rmSync(data_dir, { recursive: true, force: true });
  }
}

await main();
