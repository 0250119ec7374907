/**
 * The shared-directory check against real daemons: node gp2's slurmd runs in its own mount
 * namespace where the data directory is an empty tmpfs (a node that does not mount the server's
 * file system). `goodput up --backend slurm` refuses to start and names gp2 and what to change.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { runCli, tempDataDir } from '../../../test-support/control/harness.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';

const skip = slurmMissing();
describe('goodput up --backend slurm on a data directory not every node sees', { skip }, () => {
  let cluster: SlurmCluster | undefined;
  const data_dir = tempDataDir('goodput-slurm-unshared-');
  after(async () => {
    await cluster?.stop();
    rmSync(data_dir, { recursive: true, force: true });
  });

  it('refuses to start (E_SHARED_FS) and names the node that cannot read it', { timeout: 120_000 }, async () => {
    cluster = await startSlurmCluster({ unshared: { node: 'gp2', dir: data_dir } });
    const up = await runCli(['up', '--data-dir', data_dir, '--port', '0', '--backend', 'slurm'], cluster.env);
    assert.equal(up.status, 1, up.stdout + up.stderr);
    assert.match(up.stderr, /node\(s\) gp2 cannot read .*must be on a file system every node mounts at the same path/);
  });
});
