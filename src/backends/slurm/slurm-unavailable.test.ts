/**
 * An unreachable slurmctld (real client commands against a controller address nobody listens
 * on): the inventory refresh and launches fail with E_BACKEND_UNAVAILABLE and a message that
 * says what to check, and the last inventory is kept. Needs Slurm's client commands only.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SlurmBackend } from './slurm-backend.js';
import { writeDeadSlurmConf } from './testing/dead-conf.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-slurm-dead-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const skip = existsSync('/usr/bin/sinfo')
  ? undefined
  : "Slurm's client commands are not installed (apt-get install slurm-wlm)";

describe('Slurm backend with slurmctld unreachable', { skip }, () => {
  it('reports E_BACKEND_UNAVAILABLE from refresh, abandon and launch, and keeps the last inventory', async () => {
    const conf = join(dir, 'slurm.conf');
    writeDeadSlurmConf(conf);
    const b = new SlurmBackend({ name_prefix: 'goodput-dead', env: { SLURM_CONF: conf } });
    const unavailable = (e: unknown) =>
      (e as { code?: string }).code === 'E_BACKEND_UNAVAILABLE' && /slurmctld/.test((e as Error).message);
    await assert.rejects(b.refresh(), unavailable);
    assert.deepEqual(b.nodes(), [], 'an error answer is not read as an empty cluster');
    await assert.rejects(b.abandon('j', dir, 0), unavailable);
    await assert.rejects(
      b.launch({
        job_id: 'j',
        attempt: 0,
        command: ['true'],
        workdir: dir,
        env: {},
        devices: [0],
        nodes: [0],
        num_nodes: 1,
        api_url: '',
        token: '',
        job_dir: join(dir, 'j'),
      }),
      unavailable,
    );
    b.close();
  });
});
