/**
 * The e2e harness's cleanup kills only what its test started: a recorded pid that now belongs to
 * another process group (pid reuse) is left alone; the test's own server and replicas are killed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isAlive } from '../../src/backends/local/process-info.js';
import { cleanup, PLAIN_20S, sleep, startServerProcess, tempDataDir, waitFor } from './harness.js';

/** Running (a zombie left to an init that does not reap counts as gone). */
const alive = (pid: number): boolean => isAlive(pid, '');

describe('e2e harness cleanup', { skip: existsSync('/proc/self/stat') ? false : 'needs /proc' }, () => {
  it(
    'kills its server and replicas, and leaves a process group that merely has a recorded number',
    { timeout: 60_000 },
    async () => {
      const data_dir = tempDataDir('goodput-harness-');
      const server = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '1']);
      const job = await server.client.submit({ name: 'sleeper', command: [...PLAIN_20S], workdir: data_dir });
      const replica = await waitFor(
        'the replica to run',
        20_000,
        async () => (await server.client.getJob(job.id)).current_replicas[0]?.pid,
      );
      // Stands for a reused number: a live group leader that is not this test's.
      const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
      try {
        cleanup(data_dir, [server, { pid: stranger.pid! }]);
        await sleep(300);
        assert.equal(alive(server.pid), false, 'the server is killed');
        assert.equal(alive(replica), false, 'the replica is killed');
        assert.equal(alive(stranger.pid!), true, 'the stranger group is left alone');
      } finally {
        stranger.kill('SIGKILL');
      }
    },
  );
});
