/**
 * The dashboard in a real browser (Debian's chromium via playwright-core) against a real
 * `goodput up` with real synthetic trainers: what a person checks on each page, with
 * screenshots (folder printed as a test diagnostic; docs/img has two of them).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { GoodputClient } from '../client/client.js';
import {
  cleanup,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { saveToDataDir } from '../datadir/profile-file.js';
import { dashboardFile } from './live.js';
import { launchBrowser, screenshotDir, type Browser } from './testing/browser.js';

const data_dir = tempDataDir('goodput-dashboard-');
const servers: ServerProcess[] = [];
let browser: Browser | undefined;
let page: Page;
let dashboard = '';
const tokens: Record<string, string> = {};
const jobs: Record<string, string> = {};
const shots = screenshotDir();

const trainerJob = (name: string) => ({
  name,
  command: [process.execPath, TRAINER, '--samples', '3000000', '--time-scale', '0.5'],
  workdir: data_dir,
  max_replicas: 4,
});
/** The app's content (header and page, not the empty viewport below). */
const shot = (name: string) => page.locator('#app').screenshot({ path: join(shots, `${name}.png`) });

/** Logs out whoever is logged in (the button), then logs in with `token` and opens `route`. */
async function login(token: string, route = '#/jobs'): Promise<void> {
  await page.goto(`${dashboard}/`);
  await page.locator('#who, input[name=token]').first().waitFor();
  if (await page.locator('#who').count()) await page.locator('button', { hasText: 'Log out' }).click();
  await page.fill('input[name=token]', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('#who');
  await page.goto(`${dashboard}/${route}`);
}

/**
 * Shares for the shares page: alice's team's quota (1) is below its fair share (2 of the 4 slots
 * with bob using his), so it changes no decision the other tests see; team idle's quota has no
 * jobs and is all lent.
 */
const SHARES = 'teams:\n  vision: {members: [alice], quota: {cpu: 1}}\n  idle: {members: [dave], quota: {cpu: 1}}\n';

before(async () => {
  const shares_file = join(data_dir, 'shares.yaml');
  writeFileSync(shares_file, SHARES);
  const server = await startServerProcess(data_dir, [
    '--shares',
    shares_file,
    '--cpu-slots',
    '4',
    '--interval-s',
    '1',
    '--grace-s',
    '5',
    '--policy',
    'optimus',
  ]);
  servers.push(server);
  dashboard = await waitFor(
    'dashboard.json',
    10_000,
    async () => (JSON.parse(readFileSync(dashboardFile(data_dir), 'utf8')) as { url: string }).url,
  );
  tokens.admin = readFileSync(join(data_dir, 'admin-token'), 'utf8').trim();
  for (const user of ['alice', 'bob']) {
    tokens[user] = (await server.client.createToken(user)).token;
    const client = new GoodputClient(server.url, tokens[user]);
    jobs[user] = (await client.submit(trainerJob(`${user}-train`))).id;
  }
  await waitFor('both jobs to run and report', 60_000, async () => {
    const all = await server.client.listJobs();
    return all.every((j) => j.state === 'running' && j.step > 20);
  });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.on('dialog', (d) => void d.accept());
});

after(async () => {
  await browser?.close();
  cleanup(data_dir, servers);
});

describe('dashboard in chromium', { timeout: 240_000 }, () => {
  it('refuses a bad token on the login form', async (t) => {
    t.diagnostic(`screenshots in ${shots}`);
    await page.goto(`${dashboard}/`);
    await page.fill('input[name=token]', 'gpu_not-a-token');
    await page.click('button[type=submit]');
    assert.match(await page.locator('[role=alert]').innerText(), /invalid bearer token/);
  });

  it("jobs page: alice sees her running job with its goodput, not bob's", async () => {
    await login(tokens.alice!);
    const row = page.locator(`[data-job-id="${jobs.alice}"]`);
    await row.waitFor();
    assert.equal(await page.locator(`[data-job-id="${jobs.bob}"]`).count(), 0);
    assert.equal((await page.locator('#who').innerText()).trim(), 'alice');
    const text = await row.innerText();
    assert.match(text, /alice-train/);
    assert.match(text, /running/);
    await waitFor('goodput and progress in the row', 15_000, async () => /\d+%/.test(await row.innerText()));
    await page.fill('input[type=search]', 'no-such-job');
    await page.waitForSelector(`[data-job-id="${jobs.alice}"]`, { state: 'detached' });
    assert.match(await page.locator('#job-count').innerText(), /^0 of 1 jobs/);
    await page.fill('input[type=search]', 'alice');
    await row.waitFor();
    await shot('jobs');
  });

  it("cluster page: alice's job on its devices, bob's shown as another user's", async () => {
    await page.goto(`${dashboard}/#/cluster`);
    await page.waitForSelector('#cluster-grid .cell');
    const detail = await new GoodputClient(servers[0]!.url, tokens.admin).getJob(jobs.alice!);
    const mine = page.locator(`#cluster-grid .cell[data-job="${jobs.alice}"]`);
    await waitFor("alice's devices in the grid", 10_000, async () => (await mine.count()) === detail.devices.length);
    assert.equal(await page.locator(`#cluster-grid .cell[data-job="${jobs.bob}"]`).count(), 0);
    assert.ok(
      (await page.locator('#cluster-grid .cell.other').count()) >= 1,
      "bob's devices are shown as another user's",
    );
    assert.equal(
      await page.locator('#cluster-grid .node-types').first().innerText(),
      'cpu',
      "the node's GPU types (CPU slots are type cpu)",
    );
    assert.ok(Number(await page.locator('.timeline canvas').getAttribute('data-bands')) >= 1, 'timeline has bands');
    await shot('cluster-alice');
  });

  it("shares page: each team's quota, use, borrowed and lent, factor and usage, as GET /v1/shares", async () => {
    await login(tokens.alice!, '#/shares');
    await page.waitForSelector('#shares-table tr[data-team="idle"]');
    const cell = (team: string, col: string) =>
      page.locator(`#shares-table tr[data-team="${team}"] td[data-col="${col}"]`).innerText();
    assert.equal(await cell('vision', 'members'), 'alice');
    assert.equal(await cell('vision', 'quota'), 'cpu 1');
    assert.equal(await cell('idle', 'quota'), 'cpu 1');
    assert.equal(await cell('idle', 'use'), '–');
    assert.equal(await cell('idle', 'lent'), 'cpu 1');
    // bob is no team's member: his own team, without a quota.
    assert.equal(await cell('bob', 'quota'), '–');
    // The page shows what the API answers (both poll; wait until they agree).
    const api = new GoodputClient(servers[0]!.url, tokens.alice!);
    await waitFor("the page to show the API's use, borrowed, factor and usage", 15_000, async () => {
      const teams = await api.shares();
      for (const t of teams) {
        const used =
          Object.entries(t.use)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ') || '–';
        const borrowed =
          Object.entries(t.borrowed)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ') || '–';
        if ((await cell(t.team, 'use')) !== used || (await cell(t.team, 'borrowed')) !== borrowed) return false;
        if ((await cell(t.team, 'factor')) !== t.fair_share_factor.toFixed(2)) return false;
      }
      return teams.some(
        (t) => t.team === 'vision' && (t.use['cpu'] ?? 0) > 1 && t.borrowed['cpu'] === t.use['cpu']! - 1,
      );
    });
    assert.match(await cell('vision', 'usage'), /^\d+\.\d\d device-h$/);
    await shot('shares');
  });

  it('job page: charts have the reported points, events and the log tail', async () => {
    await page.goto(`${dashboard}/#/job/${jobs.alice}`);
    const goodput = page.locator('.chart[data-title^="Goodput"]');
    await goodput.waitFor();
    await waitFor('goodput chart points', 15_000, async () => Number(await goodput.getAttribute('data-points')) >= 3);
    assert.ok(Number(await page.locator('.chart[data-title="Replicas"]').getAttribute('data-points')) >= 3);
    await page.waitForSelector('#events li[data-kind="launched"]');
    // The header's batch and learning-rate scale are the job view's (those goodput show prints).
    await waitFor('the batch in force in the header', 15_000, async () => {
      const { batch: b, lr_scale } = (await servers[0]!.client.getJob(jobs.alice!)).insight;
      const text = await page
        .locator('#job-batch')
        .innerText()
        .catch(() => '');
      return (
        b !== null &&
        lr_scale !== null &&
        text.includes(
          `${b.total} = ${b.local_bsz} x ${b.accum_steps + 1} x ${b.replicas}, learning rate x${lr_scale.toFixed(2)}`,
        )
      );
    });
    await waitFor('log tail', 10_000, async () =>
      (await page.locator('#log').innerText()).includes('synthetic: resumed'),
    );
    assert.equal(await page.locator('#cancel').count(), 1, 'the owner may cancel');
    assert.equal(await page.locator('#job-gpu-type div').last().innerText(), 'cpu', 'the GPU type of its devices');
  });

  it("plan page: from the job page's profile key, the key's plan with its measured rows and chart", async () => {
    const key = (await servers[0]!.client.getJob(jobs.alice!)).profile_key;
    // Stored as `goodput profile` stores one (into the server's data directory), at 1 and 2 CPU slots.
    const points = [1, 2].flatMap((num_replicas) =>
      [16, 64, 256].map((local_bsz) => ({
        num_nodes: 1,
        num_replicas,
        local_bsz,
        accum_step_time_s: 0.001 * local_bsz,
        optim_step_time_s: 0.001 * local_bsz + 0.01 * (num_replicas - 1),
      })),
    );
    const limits = {
      init_batch_size: 64,
      max_batch_size: 1024,
      min_local_bsz: 16,
      max_local_bsz: 256,
      accumulation: false,
    };
    await saveToDataDir(data_dir, key, { gpu_type: 'cpu', points, grad: [], limits, notes: [] }, 'profile-run');
    await page.goto(`${dashboard}/#/job/${jobs.alice}`);
    await page.locator('#job-plan').click();
    await page.locator('#plan-table, [role=alert]').first().waitFor({ timeout: 20_000 });
    assert.equal(await page.locator('[role=alert]').count(), 0, await page.locator('#app').innerText());
    assert.equal(await page.locator('#plan-key').innerText(), key);
    assert.ok(
      (await page.locator('#plan-table tr[data-source="measured"]').count()) >= 1,
      'the measured type has measured rows',
    );
    assert.ok(
      (await page.locator('#plan-table tr[data-source="estimated"]').count()) >= 1,
      'the GPU table types are estimated',
    );
    assert.match(await page.locator('#plan-answers').innerText(), /fastest within the budget: \d+ x /);
    // Every row shows its time's 80% interval and what it rests on (docs/planner.md).
    const ranges = await page.locator('#plan-table td.plan-time-interval').allInnerTexts();
    assert.ok(ranges.length >= 2 && ranges.every((t) => /.+-.+/.test(t)), ranges.join(' | '));
    assert.ok((await page.locator('#plan-table td[data-calibrated]').count()) === ranges.length);
    assert.ok(Number(await page.locator('.chart[data-title^="time to target"]').getAttribute('data-points')) >= 2);
    await shot('plan-alice');
  });

  it("bob cannot open alice's job page, and cancels his own job", async () => {
    await login(tokens.bob!, `#/job/${jobs.alice}`);
    await waitFor('not-found message', 10_000, async () =>
      /no job/.test(await page.locator('[role=alert]').innerText()),
    );
    await page.goto(`${dashboard}/#/job/${jobs.bob}`);
    await page.locator('#cancel').click();
    await waitFor(
      'state cancelled on the page',
      20_000,
      async () => (await page.locator('#job-state').innerText()) === 'cancelled',
    );
    assert.equal((await new GoodputClient(servers[0]!.url, tokens.admin).getJob(jobs.bob!)).state, 'cancelled');
    assert.equal(await page.locator('#cancel').count(), 0, 'no cancel button on a finished job');
  });

  it('admin sees every job; screenshots of the cluster and job pages', async () => {
    // The policy grows alice's job onto bob's devices, then shares them with a third job.
    const admin = new GoodputClient(servers[0]!.url, tokens.admin);
    await waitFor("alice's job rescaled to 4 replicas", 60_000, async () => {
      const j = await admin.getJob(jobs.alice!);
      return j.state === 'running' && j.replicas === 4;
    });
    const carol = await admin.submit({ ...trainerJob('carol-finetune'), user: 'carol' });
    await waitFor("carol's job to run", 60_000, async () => (await admin.getJob(carol.id)).state === 'running');
    await login(tokens.admin!, '#/jobs');
    for (const id of [jobs.alice, jobs.bob, carol.id]) await page.locator(`[data-job-id="${id}"]`).waitFor();
    await page.goto(`${dashboard}/#/cluster`);
    await page.waitForSelector(`#cluster-grid .cell[data-job="${carol.id}"]`);
    await page.waitForTimeout(3500); // reports of the new attempts arrive
    await shot('cluster');
    await page.goto(`${dashboard}/#/job/${jobs.alice}`);
    await page.waitForSelector('#events li[data-kind="rescale"]');
    // Each rescale decision is marked on the charts and listed with its reason.
    await waitFor(
      'rescales marked on the charts',
      10_000,
      async () => Number(await page.locator('.chart[data-title="Replicas"]').getAttribute('data-marks')) >= 2,
    );
    // The latest rescale's reason: the policy's, or the sharing between users (carol is a user of her own).
    assert.match(
      await page.locator('#events li[data-kind="rescale"]').first().innerText(),
      /(grew|shrank) \d -> \d( \(optimus: | to return \d+ CPU slots? to team carol's fair share)/,
    );
    await page.waitForTimeout(500);
    await shot('job');
  });
});
