/**
 * The live verdicts across ranks in a real browser (Debian's chromium via playwright-core) against
 * a real `goodput up` on 4 CPU slots running 3 gloo ranks of real torch through the SDK: rank 2 is
 * slow (150 ms more compute per step), rank 1 stops itself 30 s into its steps. The job page's
 * ranks box names the straggler while it runs; once the hang is named, the cluster page marks
 * rank 1's device drained (cell and legend) until `goodput nodes clear`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { testServers, waitFor, type ServerProcess } from '../../test-support/control/harness.js';
import { noPython, pythonWith } from '../../test-support/control/python.js';
import { rankFaultsJob } from '../../test-support/ranks/rank-scenarios.js';
import { dashboardFile } from './live.js';
import { launchBrowser, screenshotDir, type Browser } from './testing/browser.js';

const python = pythonWith(['torch']);
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});
const servers = testServers('goodput-dashboard-ranks-');
const { data_dir } = servers;
let server: ServerProcess;
let page: Page;
let dashboard = '';
const shots = screenshotDir();

describe(
  'verdicts across ranks on the dashboard (chromium)',
  { skip: python ? undefined : noPython(['torch']) },
  () => {
    before(async () => {
      server = await servers.start(['--cpu-slots', '4', '--interval-s', '1', '--policy', 'fifo']);
      dashboard = await waitFor(
        'dashboard.json',
        10_000,
        async () => (JSON.parse(readFileSync(dashboardFile(data_dir), 'utf8')) as { url: string }).url,
      );
      browser = await launchBrowser();
      page = await browser.context.newPage();
      await page.goto(`${dashboard}/`);
      await page.fill('input[name=token]', readFileSync(join(data_dir, 'admin-token'), 'utf8').trim());
      await page.click('button[type=submit]');
      await page.waitForSelector('#who');
    });

    it(
      'job page names the slow rank; cluster page marks the hung rank device drained',
      { timeout: 400_000 },
      async (t) => {
        t.diagnostic(`screenshots in ${shots}`);
        const { client } = server;
        const args = ['--slow-rank', '2', '--slow-ms', '150', '--hang-rank', '1', '--hang-after-s', '30'];
        const job = await client.submit(rankFaultsJob('ranks-view', python!, data_dir, 3, args));
        await waitFor(
          'the straggler verdict',
          240_000,
          async () => (await client.ranks(job.id)).straggler ?? undefined,
        );
        await page.goto(`${dashboard}/#/job/${job.id}`);
        const box = page.locator('#ranks[data-verdict=straggler]');
        await box.waitFor({ timeout: 20_000 });
        assert.match(await box.innerText(), /straggler: rank 2 \(node \S+, device \d\) computes/);
        assert.equal(await page.locator('#ranks tr[data-rank]').count(), 3);
        await page.locator('#app').screenshot({ path: join(shots, 'job-ranks.png') });

        const hung = await waitFor('the rank-hung event', 120_000, async () =>
          (await client.events(job.id)).find((e) => e.kind === 'rank-hung'),
        );
        assert.equal(hung.data.rank, 1);
        await page.goto(`${dashboard}/#/cluster`);
        const cell = page.locator(`.cell[data-mark=drained][data-device="${String(hung.data.device)}"]`);
        await cell.waitFor({ timeout: 20_000 });
        assert.match((await cell.getAttribute('title')) ?? '', /drained: its rank hung/);
        assert.match(await page.locator('#marks').innerText(), new RegExp(`/${String(hung.data.device)} drained`));
        await page.locator('#app').screenshot({ path: join(shots, 'cluster-marks.png') });

        await client.clearNode(String(hung.data.node));
        await page.locator('.cell[data-mark=drained]').waitFor({ state: 'detached', timeout: 20_000 });
        await client.cancel(job.id);
      },
    );
  },
);
