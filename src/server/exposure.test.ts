import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cleanup, runCli, startServerProcess, tempDataDir } from '../../test-support/control/harness.js';

describe('secure by default: who can reach a single-user server', () => {
  it('refuses a non-loopback --host in single-user mode, saying why and what to do', async () => {
    const dir = tempDataDir();
    try {
      const r = await runCli(['up', '--data-dir', dir, '--port', '0', '--host', '0.0.0.0', '--cpu-slots', '1']);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /every job runs as the server's own account and can read the admin token and secret/);
      assert.match(r.stderr, /--run-as-owner/);
    } finally {
      cleanup(dir);
    }
  });

  it('with --single-user-network: warns and logs the address it really listens on', async () => {
    const dir = tempDataDir();
    const server = await startServerProcess(dir, [
      '--host',
      '0.0.0.0',
      '--single-user-network',
      '--cpu-slots',
      '1',
      '--dashboard-port',
      'off',
    ]);
    try {
      const port = new URL(server.url).port;
      const log = readFileSync(join(dir, 'up.log'), 'utf8');
      assert.match(log, /warning: single-user mode on --host 0\.0\.0\.0/);
      assert.match(log, new RegExp(`listening on 0\\.0\\.0\\.0:${port} \\(every network interface\\)`));
      assert.equal((await fetch(`${server.url}/v1/health`)).status, 200);
    } finally {
      cleanup(dir, [server]);
    }
  });
});
