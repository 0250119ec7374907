import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  type ServerProcess,
} from '../../../test-support/control/harness.js';

const servers: ServerProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const d of dirs) cleanup(d, servers);
});

describe('goodput up --detach', () => {
  it('refuses a data directory a running server owns, saying so, and leaves that server and its log alone', async () => {
    const d = tempDataDir('goodput-detach-running-');
    dirs.push(d);
    const running = await startServerProcess(d, ['--cpu-slots', '1', '--interval-s', '60']);
    servers.push(running);
    const second = await runCli(['up', '--data-dir', d, '--port', '0', '--cpu-slots', '1', '--detach']);
    assert.equal(second.status, 1, second.stderr);
    assert.match(
      second.stderr,
      new RegExp(`error\\[E_RUNNING\\]: a goodput server \\(pid ${running.pid}\\) already uses`),
    );
    assert.doesNotMatch(second.stderr, /E_START/);
    const log = join(d, 'server.log');
    assert.ok(
      !existsSync(log) || !/E_RUNNING/.test(readFileSync(log, 'utf8')),
      "nothing written into the running server's data directory log",
    );
    assert.equal((await running.client.listJobs()).length, 0, 'the running server still answers');
  });

  it("repeats the background server's own error when it fails to start", async () => {
    const d = tempDataDir('goodput-detach-port-');
    dirs.push(d);
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    try {
      const port = (taken.address() as AddressInfo).port;
      const r = await runCli(['up', '--data-dir', d, '--port', String(port), '--cpu-slots', '1', '--detach']);
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `error\\[E_START\\]: the server did not start \\(E_LISTEN: port ${port} on 127\\.0\\.0\\.1 is in use; pass another --port\\); see .*server\\.log`,
        ),
      );
    } finally {
      taken.close();
    }
  });
});
