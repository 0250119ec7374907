/**
 * Issue 52: the dashboard could not be opened as the README suggests (a fresh or headless browser
 * showed "loading..." and login was a token pasted into a form). `goodput dashboard` prints a
 * link whose fragment carries a short-lived, single-use code; chromium opened on it lands on the
 * jobs page, logged in. Also what a plain job's page says (no charts, no plan, "CPU slot 0").
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GoodputClient } from '../client/client.js';
import {
  cleanup,
  PLAIN_20S,
  runCli,
  startServerProcess,
  tempDataDir,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { LoginLinks } from './login-link.js';
import { launchBrowser, type Browser } from './testing/browser.js';

describe('LoginLinks', () => {
  it('a code works once, within its time, and only as issued', () => {
    let now = 0;
    const links = new LoginLinks(() => now, 120);
    const { code, expires_in_s } = links.issue('gpa_secret');
    assert.equal(expires_in_s, 120);
    assert.match(code, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(links.redeem(code), 'gpa_secret');
    assert.equal(links.redeem(code), undefined, 'single use');
    const late = links.issue('gpa_secret').code;
    now = 120_000;
    assert.equal(links.redeem(late), undefined, 'expired');
    assert.equal(links.redeem('not-a-code'), undefined);
  });
});

describe('goodput dashboard: a login link in chromium', { timeout: 180_000 }, () => {
  const data_dir = tempDataDir('goodput-login-link-');
  const servers: ServerProcess[] = [];
  let browser: Browser | undefined;
  let plain = '';

  before(async () => {
    const server = await startServerProcess(data_dir, ['--cpu-slots', '2', '--interval-s', '1']);
    servers.push(server);
    plain = (
      await server.client.submit({ name: 'plain-sleep', command: [...PLAIN_20S], workdir: data_dir, sdk: false })
    ).id;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    cleanup(data_dir, servers);
  });

  const link = async (env: Record<string, string> = {}): Promise<string> => {
    const out = await runCli(['dashboard', '--data-dir', data_dir, '--json'], env);
    assert.equal(out.status, 0, out.stderr);
    return (JSON.parse(out.stdout) as { url: string }).url;
  };

  it('opens the jobs page logged in, and takes the code out of the address bar', async () => {
    const url = await link();
    assert.match(
      url,
      /^http:\/\/127\.0\.0\.1:\d+\/#login=[A-Za-z0-9_-]{43}$/,
      'the code is in the fragment, never in a query string',
    );
    const page = await browser!.context.newPage();
    await page.goto(url);
    await page.locator(`[data-job-id="${plain}"]`).waitFor({ timeout: 30_000 });
    assert.match(await page.locator('#who').innerText(), /\(admin\)/);
    assert.ok(!page.url().includes('login='), page.url());
    assert.ok(
      !readFileSync(join(data_dir, 'up.log'), 'utf8').includes(url.split('login=')[1]!),
      'the code is in no server log',
    );
    // The same link again (a copy found later): refused, with what to do.
    await page.evaluate('localStorage.clear()');
    await page.goto('about:blank');
    await page.goto(url);
    assert.match(
      await page.locator('[role=alert]').innerText(),
      /expired .* or was already used; run 'goodput dashboard' for a new one/,
    );
    await page.close();
  });

  it("a user's link logs in as that user; the login page names goodput dashboard and goodput token create", async () => {
    const alice = (await servers[0]!.client.createToken('alice')).token;
    const page = await browser!.context.newPage();
    await page.goto(await link({ GOODPUT_USER_TOKEN: alice }));
    await page.locator('#job-count').waitFor({ timeout: 30_000 });
    assert.equal((await page.locator('#who').innerText()).trim(), 'alice');
    await page.locator('button', { hasText: 'Log out' }).click();
    const help = await page.locator('form.login').innerText();
    assert.match(help, /goodput dashboard/);
    assert.match(help, /goodput token create/);
    assert.doesNotMatch(help, /POST \/v1\/tokens/);
    await page.close();
  });

  it("a plain job's page: no promise of charts, no plan link, where it runs in words", async () => {
    const client = new GoodputClient(servers[0]!.url, readFileSync(join(data_dir, 'admin-token'), 'utf8').trim());
    const page = await browser!.context.newPage();
    await page.goto(await link());
    await page.locator('#who').waitFor({ timeout: 30_000 });
    for (let i = 0; i < 100 && (await client.getJob(plain)).state !== 'running'; i++)
      await new Promise((r) => setTimeout(r, 200));
    await page.goto(`${new URL(page.url()).origin}/#/job/${plain}`);
    const none = await page.locator('#no-charts').innerText();
    assert.match(none, /a plain script does not report/);
    assert.doesNotMatch(none, /appear once/);
    assert.equal(await page.locator('#job-plan').count(), 0);
    assert.match(await page.locator('#job-devices').innerText(), /CPU slot \d/);
    await page.close();
  });
});
