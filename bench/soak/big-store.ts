/**
 * Fault: a store of 40,000 jobs (a busy cluster's history) under the dashboard. The store is
 * written directly (one transaction, no HTTP), a real `goodput up` with its dashboard starts on
 * it, three chromium tabs keep the cluster page open (each polls every 3 s), and meanwhile:
 * `/v1/health` latency (a closed loop), the cluster endpoint's latency, and the cluster page's
 * first render in a fresh tab. Beside them, in the same run: the unfiltered read of every job
 * that the cluster route did before (Store.listJobs()) and the windowed read it does now.
 * Targets: first render <= 1 s, health p99 <= 100 ms.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { launchBrowser } from '../../src/dashboard/testing/browser.js';
import { PLACED_STATES, TERMINAL_STATES } from '../../src/store/lifecycle.js';
import { eventCrc } from '../../src/store/sqlite/rows.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { call, quantile, sleep, startUp, waitFor, type SoakFault } from './serve.js';

const DAY_MS = 86_400_000;
const FIRST_RENDER_TARGET_MS = 1000;
const HEALTH_P99_TARGET_MS = 100;

/** Writes `jobs` ended jobs (ended over the last 30 days, one replica and four events each) in one transaction. */
export function writeHistory(db_path: string, jobs: number, now_ms: number): void {
  new SqliteStore(db_path, { background_checkpoint_ms: 0 }).close();
  const db = new Database(db_path);
  const job = db.prepare(
    'INSERT INTO jobs (id, name, user, spec, state, submitted_at_ms, started_at_ms, finished_at_ms, launches, attained_service_gpu_s, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)',
  );
  const replica = db.prepare(
    "INSERT INTO replicas (job_id, attempt, rank, device, node, pid, proc_start, log_path, started_at_ms, exit_code, exited_at_ms) VALUES (?, 0, 0, ?, 'local', ?, '', '', ?, ?, ?)",
  );
  const event = db.prepare(
    'INSERT INTO events (job_id, at_ms, actor, kind, from_state, to_state, reason, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let i = 0; i < jobs; i++) {
      const id = `h${String(i).padStart(6, '0')}`;
      const end = now_ms - Math.floor(((jobs - i) / jobs) * 30 * DAY_MS);
      const start = end - 600_000 - (i % 7) * 60_000;
      const submitted = start - 30_000;
      const state = i % 11 === 0 ? 'failed' : i % 13 === 0 ? 'cancelled' : 'succeeded';
      const spec = {
        name: `train-${i % 200}`,
        command: ['python3', 'train.py', '--lr', '0.1', '--epochs', String(i % 90)],
        workdir: '/home/u/project',
        env: { SEED: String(i) },
        min_replicas: 0,
        max_replicas: 1,
        max_restarts: 2,
        preemptible: true,
        priority: 0,
        user: `user${i % 20}`,
      };
      job.run(
        id,
        spec.name,
        spec.user,
        JSON.stringify(spec),
        state,
        submitted,
        start,
        end,
        (end - start) / 1000,
        state,
      );
      replica.run(id, i % 2, 10_000 + i, start, state === 'failed' ? 1 : 0, end);
      for (const [kind, from, to, at] of [
        ['submitted', null, 'queued', submitted],
        ['assigned', 'queued', 'starting', start - 1000],
        ['launched', 'starting', 'running', start],
        [state, 'running', state, end],
      ] as const) {
        event.run(id, at, 'bench', kind, from, to, kind, '{}', eventCrc('bench', kind, kind, '{}'));
      }
    }
  })();
  db.close();
}

/** Runs the fault in `dir` (its own data directory) and returns what went wrong. */
export async function bigStoreFault(dir: string, jobs = 40_000, load_s = 20): Promise<SoakFault> {
  const data_dir = join(dir, 'big-store');
  mkdirSync(data_dir, { mode: 0o700 });
  const db = join(data_dir, 'goodput.sqlite');
  const t0 = performance.now();
  writeHistory(db, jobs, Date.now());
  const built_s = (performance.now() - t0) / 1000;
  // The read the cluster route did before (every job) and the one it does now (its window).
  const store = new SqliteStore(db, { background_checkpoint_ms: 0 });
  let t = performance.now();
  const all = (await store.listJobs()).length;
  const unfiltered_ms = performance.now() - t;
  t = performance.now();
  const drawn = (
    await store.listJobs({
      states: [...PLACED_STATES, 'preempted', ...TERMINAL_STATES],
      ended_since_ms: Date.now() - 3 * 3_600_000,
    })
  ).length;
  const windowed_ms = performance.now() - t;
  await store.close();

  const server = await startUp(data_dir, dir, [], true);
  const browser = await launchBrowser();
  try {
    for (let k = 0; k < 2; k++)
      await server.client.submit({ name: `live-${k}`, command: ['sleep', '600'], workdir: '/tmp' });
    await waitFor(
      'two running jobs',
      30_000,
      async () => (await server.client.listJobsPage({ state: 'running' })).jobs.length === 2,
    );
    const page_url = `${server.dashboard_url!}/#/cluster`;
    const ready =
      "document.querySelectorAll('#cluster-grid .cell').length === 2 && Number(document.querySelector('.timeline canvas')?.getAttribute('data-bands')) > 0";
    const open = async () => {
      const page = await browser.context.newPage();
      await page.addInitScript(`localStorage.setItem('goodput-token', ${JSON.stringify(server.admin)})`);
      const start = Date.now();
      await page.goto(page_url);
      await page.waitForFunction(ready, undefined, { timeout: 60_000, polling: 'raf' });
      return { page, ms: Date.now() - start };
    };
    // Three dashboard clients: tabs that stay on the cluster page (it polls every 3 s).
    const tabs = [];
    for (let k = 0; k < 3; k++) tabs.push(await open());
    const end = performance.now() + load_s * 1000;
    const health: number[] = [];
    const cluster: number[] = [];
    let healthErrors = 0;
    const healthLoop = async () => {
      while (performance.now() < end) {
        const r = await call(server.url, 'GET', '/v1/health');
        if (r.status !== 200) healthErrors++;
        health.push(r.ms);
        await sleep(20);
      }
    };
    const clusterLoop = async () => {
      while (performance.now() < end) {
        cluster.push((await call(server.dashboard_url!, 'GET', '/dash/cluster?hours=3', server.admin)).ms);
        await sleep(3000);
      }
    };
    const renders: number[] = [];
    const renderLoop = async () => {
      await sleep(2000);
      for (let k = 0; k < 5 && performance.now() < end; k++) {
        const r = await open();
        renders.push(r.ms);
        await r.page.close();
      }
    };
    await Promise.all([healthLoop(), clusterLoop(), renderLoop()]);
    for (const tab of tabs) await tab.page.close();
    const render_ms = quantile(renders, 0.5);
    const p99 = quantile(health, 0.99);
    const met = render_ms <= FIRST_RENDER_TARGET_MS && p99 <= HEALTH_P99_TARGET_MS && healthErrors === 0;
    return {
      fault: `a ${jobs.toLocaleString('en')}-job store, three dashboard tabs on the cluster page`,
      lost: `${healthErrors} health requests failed`,
      stuck: 'none (the page rendered in every tab)',
      slow: `cluster page first render median ${render_ms.toFixed(0)} ms (${renders.map((r) => r.toFixed(0)).join(', ')}; target <= ${FIRST_RENDER_TARGET_MS}), /v1/health p99 ${p99.toFixed(1)} ms over ${health.length} requests (target <= ${HEALTH_P99_TARGET_MS})`,
      met,
      details: [
        `store of ${jobs} ended jobs written in ${built_s.toFixed(1)} s (one transaction); tabs' first renders ${tabs.map((x) => x.ms).join(', ')} ms`,
        `/dash/cluster?hours=3 p50 ${quantile(cluster, 0.5).toFixed(1)} ms, max ${Math.max(...cluster).toFixed(1)} ms (${cluster.length} requests)`,
        `read of the route before (every job, in-process): ${all} jobs in ${unfiltered_ms.toFixed(0)} ms; now (its 3-hour window): ${drawn} jobs in ${windowed_ms.toFixed(1)} ms`,
      ],
    };
  } finally {
    await browser.close();
    server.stop();
  }
}
