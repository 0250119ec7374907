/** `goodput token create|ls|revoke` against a real server, and the duration parser. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { parseDuration_s } from './token.js';

const data_dir = tempDataDir('goodput-token-');
let server: ServerProcess | undefined;
before(async () => {
  server = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '60']);
});
after(() => cleanup(data_dir, server ? [server] : []));

describe('goodput token', () => {
  it('parses durations', () => {
    assert.equal(parseDuration_s('90s'), 90);
    assert.equal(parseDuration_s('7d'), 7 * 86400);
    assert.throws(() => parseDuration_s('soon'), /--expires-in/);
  });

  it('creates, lists and revokes tokens; a revoked token is refused', { timeout: 60_000 }, async () => {
    const admin = ['--data-dir', data_dir];
    const created = await runCli(['token', 'create', '--user', 'alice', '--expires-in', '1h', '--json', ...admin]);
    assert.equal(created.status, 0, created.stderr);
    const { token, id, expires_at } = JSON.parse(created.stdout) as { token: string; id: string; expires_at: string };
    assert.ok(Date.parse(expires_at) > Date.now() + 3500_000);
    const asAlice = ['--server', server!.url, '--token', token];
    const own = await runCli(['token', 'ls', ...asAlice]);
    assert.equal(own.status, 0, own.stderr);
    assert.match(own.stdout, new RegExp(`${id}\\s+alice`));
    assert.doesNotMatch(own.stdout, /\byes\b/, 'alice sees no admin token');
    const revoked = await runCli(['token', 'revoke', id.slice(0, 8), ...admin]);
    assert.equal(revoked.status, 0, revoked.stderr);
    const refused = await runCli(['ls', ...asAlice]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /E_UNAUTHORIZED.*revoked/);
  });
});
