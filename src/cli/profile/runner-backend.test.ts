/**
 * `goodput profile` runs its replicas through a backend with the contract every job gets
 * (backends/contract-env.ts) and reports to the control plane's report handler
 * (api/report-route.ts): in process, the local backend on CPU slots, and a stand-in SDK script
 * that writes the environment it was given.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cpuSlots } from '../../backends/local/devices.js';
import { LocalBackend } from '../../backends/local/local-backend.js';
import { packagePath } from '../../util/package-root.js';
import { PROFILE_JOB_ID, ReportCollector } from './collector.js';
import { runProfile } from './runner.js';
import { contractVariableNames } from '../../../test-support/profile/profile-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-profile-backend-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('goodput profile through a backend', () => {
  it(
    "gives each replica the contract's variables, as any job gets them, and measures through the report handler",
    { timeout: 60_000 },
    async () => {
      process.env.FAKE_SDK_ENV_DIR = dir;
      const devices = cpuSlots(1);
      try {
        const { profile } = await runProfile({
          command: ['/usr/bin/python3', packagePath('test-support', 'profile', 'fake_sdk.py')],
          workdir: dir,
          backend: new LocalBackend({ devices }),
          devices,
          gpu_type: 'cpu',
          time_s: 8,
          work_dir: dir,
          signal: new AbortController().signal,
          progress: () => {},
        });
        assert.ok(profile.points.length >= 2, JSON.stringify(profile));
      } finally {
        delete process.env.FAKE_SDK_ENV_DIR;
      }
      const env = JSON.parse(readFileSync(join(dir, 'rank-0.json'), 'utf8')) as Record<string, string>;
      // Every variable of the contract, by the one builder every backend uses.
      const missing = contractVariableNames('cpu').filter((k) => env[k] === undefined);
      assert.deepEqual(missing, [], "the contract's variables, not a hand-written subset");
      assert.deepEqual(
        [
          env.GOODPUT_JOB_ID,
          env.RANK,
          env.WORLD_SIZE,
          env.ROLE_NAME,
          env.TORCHELASTIC_RUN_ID,
          env.GOODPUT_GPU_TYPE,
          env.GOODPUT_REPORT_INTERVAL_S,
        ],
        [env.GOODPUT_JOB_ID, '0', '1', 'default', env.GOODPUT_JOB_ID, 'cpu', '0.3'],
      );
      // A job id of this run's own: the local backend sweeps by job id and attempt, so two runs
      // with one id killed each other's replicas.
      assert.match(env.GOODPUT_JOB_ID ?? '', new RegExp(`^${PROFILE_JOB_ID}-[0-9a-f]{8}$`));
      assert.equal(
        env.GOODPUT_CHECKPOINT_DIR,
        join(dir, 'replicas-1-launch-0', 'checkpoint'),
        'a job directory per launch, as the backend lays it out',
      );
      assert.ok(existsSync(join(dir, 'replicas-1-launch-0', 'logs', 'replica-0.log')));
    },
  );

  it("serves the report endpoint with the API's job token, body limit and schema", async () => {
    const collector = new ReportCollector();
    const api = await collector.start();
    try {
      const post = (token: string, body: string) =>
        fetch(`${api}/v1/jobs/${collector.job_id}/reports`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
        });
      const bad = await post('gpj_profile.forged', '{}');
      assert.equal(bad.status, 401);
      const tooLarge = await post(collector.token, 'x'.repeat((4 << 20) + 1));
      assert.deepEqual(
        [tooLarge.status, ((await tooLarge.json()) as { error: { code: string } }).error.code],
        [413, 'E_TOO_LARGE'],
      );
      const invalid = await post(collector.token, JSON.stringify({ attempt: 0, reports: [] }));
      assert.equal(invalid.status, 400);
      assert.match(((await invalid.json()) as { error: { message: string } }).error.message, /reports/);
      const other = await fetch(`${api}/v1/jobs`, { headers: { authorization: `Bearer ${collector.token}` } });
      assert.equal(other.status, 404, 'nothing but reports');
    } finally {
      await collector.close();
    }
  });
});
