/**
 * bench:scale's server part (issue #49, item 3): a store of 40,000 jobs (2,000 running on 16,384
 * GPUs, 1,000 queued, the rest ended over 30 days) written directly (server-fixture.ts), a server
 * process on it (server-child.ts: the real store, API, loop and dashboard on a FakeBackend), then:
 * its start; its scheduling rounds end to end (and their parts) while every running job reports
 * every 30 s (report latency over the run, and over the reports that overlapped a round); `goodput
 * ls` (first page, --state running) and `goodput show` as CLI processes and as API calls; the
 * dashboard's jobs and cluster pages' first render in chromium. BENCH_SERVER_NODE_ARGS passes
 * flags to the server's node (e.g. --cpu-prof --cpu-prof-dir=DIR).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { procCpu_s } from '../../src/backends/local/process-info.js';
import { jobToken } from '../../src/control/tokens.js';
import { launchBrowser, type Browser } from '../../src/dashboard/testing/browser.js';
import { packagePath } from '../../src/util/package-root.js';
import { benchStep } from '../bench-job.js';
import { quantile, timedCall } from '../soak/server.js';
import { writeServerStore, type ServerFixtureSize } from './server-fixture.js';

/** Targets of issue #49 for the server. */
export const SERVER_TARGETS = { start_ms: 5000, round_ms: 1500, report_p99_ms: 50, ls_ms: 300, render_ms: 1000 };

/** What the server part measures, as --json prints it under "server". */
export interface ServerFigures {
  jobs: number;
  running: number;
  queued: number;
  gpus: number;
  policy: string;
  /** --server-policy-thread: where the policy decided (on, off, auto: a thread from 1,024 devices). */
  policy_thread: string;
  fixture_s: number;
  /** startServer() in the server process: store open and checks, reconcile, listen. */
  start_ms: number;
  /** CPU time of startServer() (the machine is shared: wall time includes waiting for a core). */
  start_cpu_ms: number;
  /** From spawning the process to its first answer, node's start and module loading included. */
  start_process_ms: number;
  rounds: number;
  first_round_ms: number;
  round_p50_ms: number;
  round_max_ms: number;
  /**
   * The longest round without the launches it led to: snapshot, decide and store, what the
   * issue's "round end to end" names (the launches are the backend's work: a process, an sbatch).
   */
  round_max_without_launches_ms: number;
  /** The server process's CPU time over a round (the machine is shared: wall time waits for a core). */
  round_cpu_p50_ms: number;
  round_cpu_max_ms: number;
  first_round_cpu_ms: number;
  /** Medians over the rounds of their parts. */
  round_parts_p50_ms: { snapshot: number; decide: number; apply: number };
  /**
   * The first round's parts (wall, with the event loop's turns to other work inside them);
   * `launch`: the rest of its time, the launches of the jobs it placed (the launcher's pump).
   */
  first_round_parts_ms: { snapshot: number; decide: number; apply: number; launch: number };
  reports: number;
  report_errors: number;
  report_p50_ms: number;
  report_p99_ms: number;
  /** p99 of the reports sent while a round ran. */
  report_p99_during_rounds_ms: number;
  /** The server's event loop during the report phase: blocks of over 50 ms, and the longest. */
  event_loop_blocks_over_50ms: number;
  event_loop_max_block_ms: number;
  /** Medians of 3: the CLI process's wall time, and the API call alone. */
  ls_first_page_ms: number;
  ls_running_ms: number;
  show_ms: number;
  api_ls_first_page_ms: number;
  api_ls_running_ms: number;
  api_show_ms: number;
  /** Medians of 3 fresh page loads in chromium, navigation to drawn content. */
  dashboard_jobs_ms: number;
  dashboard_cluster_ms: number;
  /** Of those, navigation to the end of the page's /dash data response (the rest is drawing). */
  dashboard_jobs_data_ms: number;
  dashboard_cluster_data_ms: number;
  /** Server process CPU seconds over the load, and its wall seconds. */
  server_cpu_s: number;
  load_wall_s: number;
  loadavg: number[];
}

/** How the server part runs. */
export interface ServerBenchOptions extends ServerFixtureSize {
  policy: string;
  /** Where the server's policy decides: on, off or auto (ServerOptions.policy_thread). */
  policy_thread: string;
  interval_s: number;
  /** Seconds of reports and rounds. */
  load_s: number;
  report_every_s: number;
  log: (line: string) => void;
}

/** Seconds the report phase waits for answers after its load ends. */
const REPORT_GRACE_S = 60;
/** Longest wait for one CLI run, API call or page (ms). */
const CALL_LIMIT_MS = 120_000;

const CHILD = packagePath('dist', 'bench', 'scale', 'server-child.js');
const CLI = packagePath('dist', 'src', 'cli', 'main.js');

interface RoundLine {
  n: number;
  total_ms: number;
  cpu_ms: number;
  snapshot_ms: number;
  decide_ms: number;
  apply_ms: number;
  /** When the parent read it (performance.now()). */
  at: number;
}

function median(xs: readonly number[]): number {
  return round1(quantile(xs, 0.5));
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Median wall ms of 3 runs of the CLI with `args`. */
function cliMs(args: readonly string[]): number {
  const runs: number[] = [];
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: CALL_LIMIT_MS });
    if (r.status !== 0) return NaN; // timed out or failed: not a figure
    runs.push(performance.now() - t);
  }
  return median(runs);
}

/** Median ms of 3 fresh page loads of `url` until `ready` holds. */
async function firstRender(
  browser: Browser,
  url: string,
  token: string,
  ready: string,
): Promise<{ render_ms: number; data_ms: number }> {
  const runs: number[] = [];
  const data: number[] = [];
  for (let k = 0; k < 3; k++) {
    const page = await browser.context.newPage();
    await page.addInitScript(`localStorage.setItem('goodput-token', ${JSON.stringify(token)})`);
    const start = Date.now();
    try {
      await page.goto(url, { timeout: CALL_LIMIT_MS });
      await page.waitForFunction(ready, undefined, { timeout: CALL_LIMIT_MS, polling: 'raf' });
    } catch {
      await page.close();
      return { render_ms: NaN, data_ms: NaN }; // not drawn within the limit: not a figure
    }
    runs.push(Date.now() - start);
    data.push(
      await page.evaluate(() =>
        Math.max(
          0,
          ...performance
            .getEntriesByType('resource')
            .filter((r) => new URL(r.name).pathname.startsWith('/dash/'))
            .map((r) => (r as { responseEnd?: number }).responseEnd ?? 0),
        ),
      ),
    );
    await page.close();
  }
  return { render_ms: median(runs), data_ms: Math.round(median(data)) };
}

/** Runs the server part; the figures. */
export async function runServerBench(o: ServerBenchOptions): Promise<ServerFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'goodput-scale-server-'));
  const data_dir = join(dir, 'data');
  mkdirSync(data_dir, { mode: 0o700 });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const t0 = performance.now();
    const seeds = await writeServerStore(join(data_dir, 'goodput.sqlite'), o);
    writeFileSync(join(dir, 'seeds.json'), JSON.stringify(seeds));
    const fixture_s = round1((performance.now() - t0) / 1000);
    o.log(`server: store of ${o.jobs} jobs (${o.running} running, ${o.queued} queued) written in ${fixture_s} s`);
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const spawned = performance.now();
    const args = [CHILD, data_dir, join(dir, 'seeds.json'), String(o.nodes), String(o.gpus_per_node)];
    child = spawn(process.execPath, [...nodeArgs, ...args, o.policy, String(o.interval_s), o.policy_thread], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const rounds: RoundLine[] = [];
    const blocks: { at: number; ms: number }[] = [];
    let onReady: (r: { url: string; dashboard_url: string; start_ms: number; start_cpu_ms: number }) => void = () => {};
    const ready = new Promise<{ url: string; dashboard_url: string; start_ms: number; start_cpu_ms: number }>(
      (r) => (onReady = r),
    );
    const exited = new Promise<never>((_, reject) =>
      child!.once('exit', (code) => reject(new Error(`the server exited (${code}); see ${data_dir}/up.log`))),
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = JSON.parse(line) as {
        ready?: { url: string; dashboard_url: string; start_ms: number; start_cpu_ms: number };
      } & {
        round?: Omit<RoundLine, 'at'>;
        block?: { ms: number };
      };
      if (m.ready) onReady(m.ready);
      if (m.block) blocks.push({ at: performance.now(), ms: m.block.ms });
      if (m.round) rounds.push({ ...m.round, at: performance.now() });
    });
    const info = await Promise.race([ready, exited]);
    const start_process_ms = round1(performance.now() - spawned);
    o.log(`server: started in ${round1(info.start_ms)} ms (${start_process_ms} ms from spawn)`);
    const url = new URL(info.url);
    const admin = readFileSync(join(data_dir, 'admin-token'), 'utf8').trim();
    const secret = readFileSync(join(data_dir, 'secret'), 'utf8').trim();
    const jobs = [...new Set(seeds.map((s) => s.job_id))];

    // Every running job reports every report_every_s, the first ones spread over the period.
    const pid = child.pid!;
    const cpu0 = procCpu_s(pid) ?? NaN;
    const loadStart = performance.now();
    const latencies: { at: number; ms: number }[] = [];
    let errors = 0;
    let firstError = '';
    const period = o.report_every_s * 1000;
    let endPhase = () => {};
    const deadline = new Promise<void>((r) => (endPhase = r));
    const deadlineTimer = setTimeout(endPhase, (o.load_s + REPORT_GRACE_S) * 1000);
    await Promise.all(
      jobs.map(async (id, k) => {
        const token = jobToken(secret, id);
        const end = loadStart + o.load_s * 1000;
        const first = loadStart + (k / jobs.length) * period;
        if (first >= end) return;
        await new Promise((r) => setTimeout(r, first - performance.now()));
        for (let step = 1; performance.now() < end; step++) {
          const body = JSON.stringify({
            attempt: 0,
            reports: [
              benchStep({
                time_s: Date.now() / 1000,
                step: 100 + step,
                num_nodes: 2,
                num_replicas: 8,
                samples: 6400 * step,
              }),
            ],
          });
          const at = performance.now();
          // A starved server (a shared machine) may not answer for minutes: the phase ends at
          // the deadline, and an unanswered report counts as an error with the time it waited.
          const r = await Promise.race([
            timedCall(agent, url, 'POST', `/v1/jobs/${id}/reports`, token, body),
            deadline.then(() => ({ status: 0, text: 'no answer by the deadline', ms: performance.now() - at })),
          ]);
          latencies.push({ at, ms: r.ms });
          if (r.status !== 200) {
            errors++;
            firstError ||= `${r.status} ${r.text.slice(0, 200)}`;
          }
          if (r.text === 'no answer by the deadline') break;
          const next = first + step * period;
          if (next >= end) break;
          await new Promise((res) => setTimeout(res, Math.max(0, next - performance.now())));
        }
      }),
    );
    clearTimeout(deadlineTimer);
    const loadBlocks = blocks.filter((b) => b.at >= loadStart).map((b) => b.ms);
    const load_wall_s = round1((performance.now() - loadStart) / 1000);
    const server_cpu_s = round1((procCpu_s(pid) ?? NaN) - cpu0);
    if (firstError) o.log(`server: first failed report: ${firstError}`);
    const during = latencies.filter((l) => rounds.some((r) => l.at + l.ms >= r.at - r.total_ms && l.at <= r.at));
    const ms = latencies.map((l) => l.ms);
    o.log(
      `server: ${rounds.length} rounds, ${latencies.length} reports (${during.length} during rounds), ` +
        `server CPU ${server_cpu_s} s over ${load_wall_s} s`,
    );

    // The CLI and the API calls behind it.
    const conn = ['--data-dir', data_dir];
    const someId = jobs[Math.floor(jobs.length / 2)]!;
    const api = async (path: string) => {
      const runs: number[] = [];
      for (let k = 0; k < 3; k++) {
        const timeout = new Promise<null>((r) => setTimeout(() => r(null), CALL_LIMIT_MS).unref());
        // A fresh connection each: the report phase's kept-alive sockets were closed by the
        // server while the CLI runs blocked this process (a reused one answers ECONNRESET).
        const r = await Promise.race([timedCall(new Agent(), url, 'GET', path, admin), timeout]);
        if (r === null || r.status !== 200) return NaN;
        runs.push(r.ms);
      }
      return median(runs);
    };
    const figuresCli = {
      ls_first_page_ms: cliMs(['ls', ...conn]),
      ls_running_ms: cliMs(['ls', '--state', 'running', ...conn]),
      show_ms: cliMs(['show', someId, ...conn]),
      api_ls_first_page_ms: await api('/v1/jobs?limit=50'),
      api_ls_running_ms: await api('/v1/jobs?limit=50&state=running'),
      api_show_ms: await api(`/v1/jobs/${someId}`),
    };
    o.log(`server: CLI ${JSON.stringify(figuresCli)}`);

    const browser = await launchBrowser();
    let jobsPage: { render_ms: number; data_ms: number };
    let clusterPage: { render_ms: number; data_ms: number };
    try {
      const gpus = o.nodes * o.gpus_per_node;
      jobsPage = await firstRender(
        browser,
        `${info.dashboard_url}/#/jobs`,
        admin,
        "document.querySelectorAll('[data-job-id]').length > 0",
      );
      clusterPage = await firstRender(
        browser,
        `${info.dashboard_url}/#/cluster`,
        admin,
        `document.querySelectorAll('#cluster-grid .cell').length === ${gpus} && ` +
          "Number(document.querySelector('.timeline canvas')?.getAttribute('data-bands')) > 0",
      );
    } finally {
      await browser.close();
    }
    const totals = rounds.map((r) => r.total_ms);
    return {
      jobs: o.jobs,
      running: o.running,
      queued: o.queued,
      gpus: o.nodes * o.gpus_per_node,
      policy: o.policy,
      policy_thread: o.policy_thread,
      fixture_s,
      start_ms: round1(info.start_ms),
      start_cpu_ms: round1(info.start_cpu_ms),
      start_process_ms,
      rounds: rounds.length,
      first_round_ms: rounds[0]?.total_ms ?? NaN,
      round_p50_ms: median(totals),
      round_max_ms: Math.max(...totals),
      round_max_without_launches_ms: round1(Math.max(...rounds.map((r) => r.snapshot_ms + r.decide_ms + r.apply_ms))),
      round_cpu_p50_ms: median(rounds.map((r) => r.cpu_ms)),
      round_cpu_max_ms: Math.max(...rounds.map((r) => r.cpu_ms)),
      first_round_cpu_ms: rounds[0]?.cpu_ms ?? NaN,
      first_round_parts_ms: firstParts(rounds[0]),
      round_parts_p50_ms: {
        snapshot: median(rounds.map((r) => r.snapshot_ms)),
        decide: median(rounds.map((r) => r.decide_ms)),
        apply: median(rounds.map((r) => r.apply_ms)),
      },
      reports: latencies.length,
      report_errors: errors,
      report_p50_ms: round1(quantile(ms, 0.5)),
      report_p99_ms: round1(quantile(ms, 0.99)),
      report_p99_during_rounds_ms: round1(
        quantile(
          during.map((l) => l.ms),
          0.99,
        ),
      ),
      event_loop_blocks_over_50ms: loadBlocks.length,
      event_loop_max_block_ms: Math.max(0, ...loadBlocks),
      ...figuresCli,
      dashboard_jobs_ms: jobsPage.render_ms,
      dashboard_cluster_ms: clusterPage.render_ms,
      dashboard_jobs_data_ms: jobsPage.data_ms,
      dashboard_cluster_data_ms: clusterPage.data_ms,
      server_cpu_s,
      load_wall_s,
      loadavg: loadavg().map(round1),
    };
  } finally {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

function firstParts(r: RoundLine | undefined): ServerFigures['first_round_parts_ms'] {
  if (!r) return { snapshot: NaN, decide: NaN, apply: NaN, launch: NaN };
  const launch = round1(r.total_ms - r.snapshot_ms - r.decide_ms - r.apply_ms);
  return { snapshot: r.snapshot_ms, decide: r.decide_ms, apply: r.apply_ms, launch };
}
