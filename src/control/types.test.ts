/**
 * The goodput policy on a machine with two kinds of GPU, decided in fake time (FakeBackend and
 * FakeClock, test-support/control/fake-plane.ts): jobs that could use every device each run on
 * devices of one type only, with GOODPUT_GPU_TYPE naming it, and grow past one device. The
 * scenario of e2e-types.test.ts, which keeps it on a real `goodput up` with recorded nvidia-smi
 * output (device discovery, `goodput nodes`, `ls` and `show`).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { BackendNode } from '../backends/backend.js';
import { fakePlane, fakeTrainer } from '../../test-support/control/fake-plane.js';

const H100 = 'NVIDIA H100 80GB HBM3';
const L40S = 'NVIDIA L40S';
/** Device index -> type, as on the recorded machine of e2e-types.test.ts. */
const TYPE_OF = [H100, L40S, H100, L40S];
const machine: BackendNode = {
  name: 'local',
  address: '127.0.0.1',
  usable: 4,
  note: '',
  devices: TYPE_OF.map((name, index) => ({ index, kind: 'gpu' as const, name })),
};

describe('goodput on a machine with two GPU types (fake backend and clock)', () => {
  it('every job runs on one type, grows past one device, and its replicas are told which type', async () => {
    const p = await fakePlane({ nodes: [machine], policy: 'goodput', interval_s: 1, grace_s: 5 });
    const ids: string[] = [];
    for (const name of ['a', 'b']) {
      ids.push(
        (
          await p.submit({
            name,
            command: fakeTrainer({ samples: 2_000_000, time_scale: 0.2, record_env: true }),
            max_replicas: 4,
          })
        ).id,
      );
    }
    await p.waitFor('both jobs to run and report', 60, async () =>
      (await Promise.all(ids.map((id) => p.job(id)))).every((j) => j.state === 'running' && j.step > 3)
        ? true
        : undefined,
    );
    const seen: string[][] = [];
    for (let t = 0; t < 30; t++) {
      for (const id of ids) {
        const j = await p.job(id);
        if (j.devices.length > 0) seen.push(j.devices.map((d) => TYPE_OF[d]!));
      }
      await p.clock.advance(500);
    }
    assert.ok(
      seen.some((types) => types.length >= 2),
      `the jobs grew past one device: ${JSON.stringify(seen.slice(-4))}`,
    );
    for (const types of seen)
      assert.equal(new Set(types).size, 1, `a job held devices of two types: ${types.join(', ')}`);
    // Every replica of every attempt was told the type of its own devices.
    for (const id of ids) {
      const dir = join(p.data_dir, 'jobs', id, 'checkpoint');
      const envs = readdirSync(dir).filter((f) => f.startsWith('env-'));
      assert.ok(envs.length > 0);
      for (const f of envs) {
        const env = JSON.parse(readFileSync(join(dir, f), 'utf8')) as {
          CUDA_VISIBLE_DEVICES: string;
          GOODPUT_GPU_TYPE: string;
        };
        const devices = env.CUDA_VISIBLE_DEVICES.split(',').map(Number);
        assert.deepEqual(
          [...new Set(devices.map((d) => TYPE_OF[d]))],
          [env.GOODPUT_GPU_TYPE],
          `${id}/${f}: ${JSON.stringify(env)}`,
        );
      }
    }
    await p.close();
  });
});
