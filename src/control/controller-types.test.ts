/**
 * The controller on a machine with two GPU types (fake backend and clock, real SQLite): whatever
 * the policy, a job's devices are of one type. The type-unaware fifo would give a job all four
 * devices; it keeps the two of one type. The goodput policy decides with its typed form.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { BackendNode } from '../backends/backend.js';
import { FakeBackend, FakeCluster } from '../backends/fake-backend.js';
import { createPolicy } from '../policy/registry.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { JobSpec } from '../store/types.js';
import { FakeClock } from '../util/clock.js';
import { Controller } from './controller.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-controller-types-'));
after(() => rmSync(root, { recursive: true, force: true }));

const TYPES = ['NVIDIA A100-SXM4-80GB', 'Tesla T4', 'NVIDIA A100-SXM4-80GB', 'Tesla T4'];
const mixed = (): BackendNode => ({
  name: 'box',
  address: '127.0.0.1',
  usable: 4,
  note: '',
  devices: TYPES.map((name, index) => ({ index, kind: 'gpu' as const, name })),
});

const spec = (name: string): JobSpec => ({
  name,
  command: [process.execPath, '-e', 'setTimeout(() => process.exit(0), 600_000);'],
  workdir: root,
  env: {},
  min_replicas: 1,
  max_replicas: 4,
  max_restarts: 0,
  preemptible: true,
  priority: 0,
});

async function run(policyName: string, jobs: number): Promise<number[][]> {
  const clock = new FakeClock(1_700_000_000_000);
  const store = new SqliteStore(':memory:', { now_ms: () => clock.now_ms() });
  const backend = new FakeBackend(new FakeCluster([mixed()], clock));
  // The MILP solver (WebAssembly) loads here, before the fake clock starts racing.
  const policy = await createPolicy(policyName, { seed: 0 });
  const controller = new Controller({
    store,
    backend,
    policy,
    data_dir: mkdtempSync(join(root, 'data-')),
    secret: 's',
    api_url: 'http://127.0.0.1:1',
    interval_s: 60,
    grace_s: 10,
    clock,
  });
  await controller.start();
  const ids: string[] = [];
  for (let i = 0; i < jobs; i++) ids.push((await controller.submit(spec(`j${i}`), 'u', 'u')).id);
  await clock.until(
    async () => (await Promise.all(ids.map((id) => store.getJob(id)))).every((j) => j!.state === 'running'),
    30_000,
  );
  const devices = (await Promise.all(ids.map((id) => store.getJob(id)))).map((j) => j!.devices);
  assert.deepEqual(
    controller.nodes().map((n) => [n.name, n.gpus, n.gpu_type]),
    [
      ['box/NVIDIA A100-SXM4-80GB', 2, TYPES[0]],
      ['box/Tesla T4', 2, TYPES[1]],
    ],
  );
  await controller.stop();
  await store.close();
  return devices;
}

describe('controller on a machine with two GPU types', () => {
  it('fifo (type-unaware) would take all 4 devices: the job keeps the 2 of one type', async () => {
    const [devices] = await run('fifo', 1);
    assert.equal(devices!.length, 2);
    assert.equal(new Set(devices!.map((d) => TYPES[d])).size, 1, `devices ${devices!.join(',')}`);
  });

  // Every registered policy decides the same snapshot through the same decide, the typed ones
  // (goodput, sia) and pollux (type-unaware over virtual nodes) as in the mixed-type simulator.
  for (const policy of ['goodput', 'sia', 'pollux']) {
    it(`${policy}: two jobs each run on devices of one type`, async () => {
      const all = await run(policy, 2);
      for (const devices of all) {
        assert.ok(devices.length >= 1);
        assert.equal(new Set(devices.map((d) => TYPES[d])).size, 1, `devices ${devices.join(',')}`);
      }
    });
  }
});
