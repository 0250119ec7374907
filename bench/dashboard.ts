/**
 * `npm run bench:dashboard`: time to first render of the jobs page with 5,000 jobs in the store
 * and of the cluster page with 512 GPUs (64 nodes x 8; --jobs, --nodes, --gpus-per-node change the
 * size), in Debian's chromium against the real dashboard server and SQLite store on loopback;
 * beside each, the same page on a small cluster (50 jobs, 8 GPUs) measured in the same run. Then
 * the size of the shipped assets (dist/web).
 *
 * First render = from navigation start to the first table row (jobs) or to every device cell
 * and the drawn timeline (cluster), assets and data included; median of BENCH_RUNS (default 5)
 * fresh page loads. With GOODPUT_SCREENSHOT_DIR set, the first load of each page is saved there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAssets } from '../src/dashboard/assets.js';
import { startDashboard, type RunningDashboard } from '../src/dashboard/server.js';
import { launchBrowser, screenshotDir, type Browser } from '../src/dashboard/testing/browser.js';
import { buildFixture, type Fixture } from './dashboard-fixture.js';
import { benchArgs, positiveIntOrExit, textFlag } from './bench-args.js';

const values = benchArgs(
  `
usage: npm run bench:dashboard [-- --jobs N --nodes N --gpus-per-node N]
Time to first render of the dashboard's jobs page (5,000 jobs) and cluster page (512 GPUs: 64 nodes
x 8) in Debian's chromium; the flags change the large store's size.
`,
  { jobs: textFlag('5000'), nodes: textFlag('64'), 'gpus-per-node': textFlag('8') },
);
const JOBS = positiveIntOrExit(values.jobs, 'jobs');
const NODES = positiveIntOrExit(values.nodes, 'nodes');
const GPUS_PER_NODE = positiveIntOrExit(values['gpus-per-node'], 'gpus-per-node');
const GPUS = NODES * GPUS_PER_NODE;

const TARGET_MS = 1000;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

async function serve(f: Fixture): Promise<RunningDashboard> {
  return startDashboard({
    host: '127.0.0.1',
    port: 0,
    live: { api_url: 'http://127.0.0.1:9', store: f.store, secret: 'bench', nodes: async () => f.nodes },
  });
}

/** Median ms from navigation to `ready` on fresh pages (token preset, as after a login). */
async function firstRender(
  browser: Browser,
  url: string,
  token: string,
  ready: string,
): Promise<{ median_ms: number; runs_ms: number[] }> {
  const runs_ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const page = await browser.context.newPage();
    await page.addInitScript(`localStorage.setItem('goodput-token', ${JSON.stringify(token)})`);
    const start = Date.now();
    await page.goto(url);
    await page.waitForFunction(ready, undefined, { timeout: 30_000, polling: 'raf' });
    runs_ms.push(Date.now() - start);
    if (i === 0 && process.env.GOODPUT_SCREENSHOT_DIR)
      await page.screenshot({
        path: join(screenshotDir(), `bench-${new URL(url).port}-${url.split('#/')[1]}.png`),
        fullPage: true,
      });
    await page.close();
  }
  const sorted = [...runs_ms].sort((a, b) => a - b);
  return { median_ms: sorted[Math.floor(sorted.length / 2)]!, runs_ms };
}

async function endpoint_ms(url: string, token: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return performance.now() - start;
}

const jobsReady = "document.querySelectorAll('[data-job-id]').length > 0";
const clusterReady = (gpus: number) =>
  `document.querySelectorAll('#cluster-grid .cell').length === ${gpus} && Number(document.querySelector('.timeline canvas')?.getAttribute('data-bands')) > 0`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'goodput-bench-dashboard-'));
  const built = performance.now();
  const big = await buildFixture(join(dir, 'big.sqlite'), JOBS, NODES, GPUS_PER_NODE);
  const small = await buildFixture(join(dir, 'small.sqlite'), 50, 1, 8);
  console.log(
    `fixtures built in ${((performance.now() - built) / 1000).toFixed(1)} s: ${JOBS} jobs on ${GPUS} GPUs, 50 jobs on 8 GPUs`,
  );
  const servers = [await serve(big), await serve(small)];
  const browser = await launchBrowser();
  try {
    const [bigUrl, smallUrl] = servers.map((s) => s.url);
    await firstRender(browser, `${smallUrl}/#/jobs`, small.token, jobsReady); // warm the browser
    const jobsBig = await firstRender(browser, `${bigUrl}/#/jobs`, big.token, jobsReady);
    const jobsSmall = await firstRender(browser, `${smallUrl}/#/jobs`, small.token, jobsReady);
    const clusterBig = await firstRender(browser, `${bigUrl}/#/cluster`, big.token, clusterReady(GPUS));
    const clusterSmall = await firstRender(browser, `${smallUrl}/#/cluster`, small.token, clusterReady(8));
    const jobsApi = await endpoint_ms(`${bigUrl}/dash/jobs`, big.token);
    const clusterApi = await endpoint_ms(`${bigUrl}/dash/cluster?hours=3`, big.token);
    const line = (what: string, r: { median_ms: number; runs_ms: number[] }, base: { median_ms: number }) =>
      `${what}: ${r.median_ms} ms median of ${RUNS} (${r.runs_ms.join(', ')}) — target < ${TARGET_MS} ms ${r.median_ms < TARGET_MS ? 'MET' : 'MISSED'}; small cluster: ${base.median_ms} ms`;
    console.log(line(`jobs page, ${JOBS} jobs, time to first render`, jobsBig, jobsSmall));
    console.log(line(`cluster page, ${GPUS} GPUs, time to first render`, clusterBig, clusterSmall));
    console.log(
      `  of which server time (one request, warm): GET /dash/jobs ${jobsApi.toFixed(0)} ms, GET /dash/cluster ${clusterApi.toFixed(0)} ms`,
    );
  } finally {
    await browser.close();
    for (const s of servers) await s.close();
    await big.store.close();
    await small.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  let raw = 0;
  let gz = 0;
  const parts = [...loadAssets()].map(([path, a]) => {
    raw += a.body.length;
    gz += a.gzip.length;
    return `${path.slice(1)} ${(a.body.length / 1024).toFixed(1)} KiB (${(a.gzip.length / 1024).toFixed(1)} KiB gzip)`;
  });
  console.log(
    `served assets (dist/web): ${(raw / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzip — ${parts.join('; ')}`,
  );
}

await main();
