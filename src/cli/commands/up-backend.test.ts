import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { runCli, tempDataDir } from '../../../test-support/control/harness.js';

const data_dir = tempDataDir('goodput-up-flags-');
after(() => rmSync(data_dir, { recursive: true, force: true }));

describe('goodput up --backend', () => {
  it('refuses an unknown backend and Slurm flags without --backend slurm (usage errors, exit 2)', async () => {
    const bad = await runCli(['up', '--data-dir', data_dir, '--backend', 'kubernetes']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--backend must be 'local' or 'slurm', got 'kubernetes'/);
    const stray = await runCli(['up', '--data-dir', data_dir, '--partition', 'gpu']);
    assert.equal(stray.status, 2);
    assert.match(stray.stderr, /--partition needs --backend slurm/);
    const gpus = await runCli(['up', '--data-dir', data_dir, '--backend', 'slurm', '--gpus', '2']);
    assert.equal(gpus.status, 2);
    assert.match(gpus.stderr, /--gpus and --cpu-slots are for the local backend/);
    const help = await runCli(['up', '--help']);
    assert.match(help.stdout + help.stderr, /--backend B/);
  });
});
