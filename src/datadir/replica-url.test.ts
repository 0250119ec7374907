/**
 * Job tokens must reach only this server: after a restart on another port, replicas sent their job token
 * to whatever listened on the old one. Now a restart while replicas run keeps their URL: a new
 * explicit port is refused, --port 0 reuses the previous one.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { hostname } from 'node:os';
import {
  cleanup,
  killGroup,
  runCli,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { listenPort, reportedHost } from './replica-url.js';

const data_dir = tempDataDir('goodput-url-');
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));

/** A port nobody listens on (taken from the OS, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('replica URL across restarts', () => {
  it('chooses the port (pure)', () => {
    const prev = new URL('http://127.0.0.1:7000');
    assert.equal(listenPort(8000, '127.0.0.1', prev, 0), 8000, 'no replica runs: any port');
    assert.equal(listenPort(0, '127.0.0.1', prev, 2), 7000, 'port 0 reuses the previous one');
    assert.equal(listenPort(7000, '127.0.0.1', prev, 2), 7000);
    assert.throws(() => listenPort(8000, '127.0.0.1', prev, 2), /E_PORT_CHANGED|report to http:\/\/127\.0\.0\.1:7000/);
    assert.throws(() => listenPort(7000, '127.0.0.2', prev, 2), /--host 127\.0\.0\.1 --port 7000/);
  });

  it('refuses a restart on another port while replicas run; --port 0 keeps theirs', { timeout: 60_000 }, async () => {
    const s1 = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '1']);
    servers.push(s1);
    const job = await s1.client.submit({ name: 'sleeper', command: ['sleep', '60'], workdir: data_dir });
    await waitFor('the job to run', 15_000, async () => (await s1.client.getJob(job.id)).state === 'running');
    killGroup(s1.pid);
    const other = await freePort();
    const refused = await runCli(['up', '--data-dir', data_dir, '--port', String(other), '--cpu-slots', '1']);
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, new RegExp(`E_PORT_CHANGED.*report to ${s1.url}`));
    const s2 = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '1']);
    servers.push(s2);
    assert.equal(s2.url, s1.url);
    await s2.client.cancel(job.id);
  });
});

describe('reportedHost', () => {
  it("gives other nodes this machine's host name for an endpoint on every interface, 127.0.0.1 on this one", () => {
    const hosts = [reportedHost('0.0.0.0', true), reportedHost('0.0.0.0', false), reportedHost('10.1.2.3', true)];
    assert.deepEqual(hosts, [hostname(), '127.0.0.1', '10.1.2.3']);
  });
});
