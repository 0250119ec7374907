/**
 * The cluster page of a large cluster in a real browser (Debian's chromium): 1,200 devices draw
 * the compact grid from markup (web/pages/compact-grid.ts) and a timeline whose lines hold two
 * devices each. A user still sees every device, a job's cells in its colour, a title on hover
 * and the job's page on a click; names are shown as written, never as markup.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { NodeView } from '../api/views.js';
import { hashToken } from '../control/tokens.js';
import { jobSpecFixture, replicaFixture } from '../store/job-fixture.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { startDashboard, type RunningDashboard } from './server.js';
import { launchBrowser, type Browser } from './testing/browser.js';

const NODES = 300;
const GPUS_PER_NODE = 4;
const JOB = 'j-big';
const NAME = '<b>resnet</b> & co';
const NODE_NAME = (n: number) => (n === 0 ? '<b>rack</b>1' : `node-${n}`);

const store = new SqliteStore(':memory:', { now_ms: () => Date.now() - 600_000 });
let dashboard: RunningDashboard | undefined;
let browser: Browser | undefined;
let page: Page;

const nodes: NodeView[] = Array.from({ length: NODES }, (_, n) => ({
  name: NODE_NAME(n),
  usable: GPUS_PER_NODE,
  note: '',
  gpu_types: ['NVIDIA H100'],
  devices: Array.from({ length: GPUS_PER_NODE }, (_, g) => ({
    index: g,
    kind: 'gpu' as const,
    name: 'NVIDIA H100',
    type: 'NVIDIA H100',
    job: n === 0 && g < 2 ? JOB : null,
    busy: n === 0 && g < 2,
  })),
}));

before(async () => {
  await store.putToken({ hash: hashToken('tok-root'), user: 'root', admin: true, created_at_ms: 0 });
  await store.createJob({ id: JOB, name: NAME, user: 'alice', spec: jobSpecFixture({ name: NAME }) }, 'alice');
  await store.assignJob(JOB, { allocation: [0, 0], devices: [0, 1] }, 0, 'scheduler', 'test');
  const at = Date.now() - 600_000;
  await store.launchJob(
    JOB,
    [replicaFixture(at, { device: 0 }), replicaFixture(at, { rank: 1, device: 1 })],
    'backend',
    'test',
  );
  dashboard = await startDashboard({
    host: '127.0.0.1',
    port: 0,
    live: { api_url: 'http://127.0.0.1:9', store, secret: 'test', nodes: async () => nodes },
  });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.addInitScript(`localStorage.setItem('goodput-token', 'tok-root')`);
});

after(async () => {
  await browser?.close();
  await dashboard?.close();
  await store.close();
});

describe('the cluster page of 1,200 devices (chromium)', () => {
  it('draws every device compactly, with the job in its colour, a title on hover and a link', async () => {
    await page.goto(`${dashboard!.url}/#/cluster`);
    const cells = page.locator('#cluster-grid .cell');
    await page.waitForFunction(`document.querySelectorAll('#cluster-grid .cell').length === ${NODES * GPUS_PER_NODE}`);
    assert.equal(await page.locator('#cluster-grid.compact').count(), 1);
    assert.equal(await page.locator('#cluster-grid .cell.free').count(), NODES * GPUS_PER_NODE - 2);
    const held = page.locator(`#cluster-grid .cell[data-job="${JOB}"]`);
    assert.equal(await held.count(), 2);
    assert.match((await held.first().getAttribute('style')) ?? '', /background/);
    // Names are text: the markup-like node name is shown as written, and makes no element.
    assert.equal(await page.locator('#cluster-grid .node-name').first().innerText(), '<b>rack</b>1 NVIDIA H100');
    assert.equal(await page.locator('#cluster-grid b').count(), 0);
    await held.nth(1).hover();
    assert.equal(
      await held.nth(1).getAttribute('title'),
      `<b>rack</b>1 gpu1 NVIDIA H100: ${NAME} (${JOB}, alice, running)`,
    );
    await cells.nth(7).hover();
    assert.equal(await cells.nth(7).getAttribute('title'), 'node-1 gpu3 NVIDIA H100: free');
    await held.first().click();
    await page.waitForFunction(`location.hash === '#/job/${JOB}'`);
  });

  it('draws the timeline two devices a line, and names the job under the pointer', async () => {
    await page.goto(`${dashboard!.url}/#/cluster`);
    const canvas = page.locator('.timeline canvas');
    await page.waitForFunction("Number(document.querySelector('.timeline canvas')?.getAttribute('data-bands')) > 0");
    assert.equal(await canvas.getAttribute('data-rows'), String(NODES * GPUS_PER_NODE));
    assert.equal(await canvas.getAttribute('data-lines'), String((NODES * GPUS_PER_NODE) / 2));
    assert.equal(await canvas.getAttribute('data-bands'), '2');
    const box = (await canvas.boundingBox())!;
    // The bands start 10 minutes ago and run to now: the right end of the first line.
    await canvas.hover({ position: { x: box.width - 3, y: 1 } });
    assert.match(
      await page.locator('.timeline .tip').innerText(),
      /^<b>resnet<\/b> & co on <b>rack<\/b>1\/gpu[01] for /,
    );
  });
});
