/**
 * What a Slurm launch takes from the server and what from the job's owner (run-as-owner.ts): the
 * account precedence (the owner's Slurm account, else the server's --account), the environment
 * (none of the server's variables but PATH, locale and SLURM_CONF reach an owner's job), and the
 * directory layout. The owner here is this process's own account (chown to oneself needs no
 * root); the real-user case is e2e-slurm-run-as-owner.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { LaunchRequest, RunAs } from '../backend.js';
import { jobDirs } from '../run-files.js';
import { launchRequestFixture } from '../testing/launch-request.js';
import { submitAs } from './run-as-owner.js';

describe('submitAs', () => {
  const root = mkdtempSync(join(tmpdir(), 'goodput-submit-as-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const me: RunAs = { user: 'me', uid: process.getuid!(), gid: process.getgid!(), home: '/home/me' };
  let n = 0;
  const request = (run_as?: RunAs): LaunchRequest => {
    const job_dir = join(root, `job-${n++}`);
    for (const d of Object.values(jobDirs(job_dir))) mkdirSync(d, { recursive: true, mode: 0o700 });
    const two = { devices: [0, 1], nodes: [0, 0], job_dir };
    return launchRequestFixture(root, 'j', ['true'], { ...two, ...(run_as ? { run_as } : {}) });
  };

  it("as the server: the server's environment and --account, sbatch as the server", () => {
    process.env.SERVER_ONLY_SECRET = 's3cret';
    try {
      const as = submitAs(request(), 2, 'srv');
      assert.equal(as.account, 'srv');
      assert.equal(as.as, undefined);
      assert.equal(as.env.SERVER_ONLY_SECRET, 's3cret', "single-user: the job inherits the server's environment");
      assert.equal(submitAs(request(), 2, undefined).account, undefined);
    } finally {
      delete process.env.SERVER_ONLY_SECRET;
    }
  });

  it("as the owner: the owner's Slurm account, else the server's; the owner's identity, not the server's variables", () => {
    process.env.SERVER_ONLY_SECRET = 's3cret';
    process.env.SLURM_CONF = '/etc/slurm/test.conf';
    try {
      const own = submitAs(request({ ...me, slurm_account: 'proj' }), 2, 'srv');
      assert.equal(own.account, 'proj');
      assert.deepEqual(own.as, { uid: me.uid, gid: me.gid });
      assert.equal(own.env.SERVER_ONLY_SECRET, undefined);
      assert.equal(own.env.USER, 'me');
      assert.equal(own.env.HOME, '/home/me');
      assert.equal(own.env.SLURM_CONF, '/etc/slurm/test.conf');
      assert.equal(submitAs(request(me), 2, 'srv').account, 'srv');
      assert.equal(submitAs(request(me), 2, undefined).account, undefined);
    } finally {
      delete process.env.SERVER_ONLY_SECRET;
      delete process.env.SLURM_CONF;
    }
  });

  it("lays out the owner's directories and creates each rank's log, 0600", () => {
    const req = request(me);
    submitAs(req, 3, undefined);
    const dirs = jobDirs(req.job_dir);
    const mode = (p: string) => statSync(p).mode & 0o777;
    assert.equal(mode(req.job_dir), 0o711);
    assert.equal(mode(dirs.logs), 0o711);
    assert.equal(mode(dirs.checkpoint), 0o700);
    assert.equal(mode(dirs.run), 0o700);
    for (const rank of [0, 1, 2]) assert.equal(mode(join(dirs.logs, `replica-${rank}.log`)), 0o600);
  });
});
