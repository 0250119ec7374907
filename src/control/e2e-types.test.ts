/**
 * End to end on the local backend of a machine with two kinds of GPU: `goodput up` runs the
 * recorded nvidia-smi output of 2 H100 and 2 L40S (an `nvidia-smi` first on its PATH prints it;
 * test-support/control/nvidia-smi-captures.ts), the replicas are real trainer processes (no GPU
 * is touched: they only read CUDA_VISIBLE_DEVICES). `goodput nodes` shows the two types; jobs that
 * could use every device each run on devices of one type only, with GOODPUT_GPU_TYPE naming it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  sleep,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { fakeNvidiaSmi, queryOutput } from '../../test-support/control/nvidia-smi-captures.js';

const data_dir = tempDataDir('goodput-types-');
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));

const H100 = 'NVIDIA H100 80GB HBM3';
const L40S = 'NVIDIA L40S';
/** Device index -> type on the recorded machine. */
const TYPE_OF = [H100, L40S, H100, L40S];

describe('local backend on a machine with two GPU types (recorded nvidia-smi output)', () => {
  it(
    'shows both types; every job runs on one type, and its replicas are told which',
    { timeout: 120_000 },
    async () => {
      const bin = mkdtempSync(join(tmpdir(), 'goodput-smi-'));
      fakeNvidiaSmi(bin, queryOutput(['h100', 'l40s', 'h100', 'l40s']));
      const server = await startServerProcess(
        data_dir,
        ['--interval-s', '1', '--grace-s', '5', '--policy', 'goodput'],
        { PATH: `${bin}:${process.env.PATH ?? ''}` },
      );
      servers.push(server);
      const nodes = await runCli(['nodes', '--data-dir', data_dir, '--json']);
      assert.equal(nodes.status, 0, nodes.stderr);
      const list = JSON.parse(nodes.stdout) as {
        name: string;
        gpu_types: string[];
        devices: { index: number; type: string }[];
      }[];
      assert.deepEqual(
        list.map((n) => [n.name, n.gpu_types]),
        [['local', [H100, L40S]]],
      );
      assert.deepEqual(
        list[0]!.devices.map((d) => d.type),
        TYPE_OF,
      );
      const text = await runCli(['nodes', '--data-dir', data_dir]);
      assert.match(text.stdout, new RegExp(`GPU types: ${H100} \\(2\\), ${L40S} \\(2\\); a job runs on one type`));

      // Each replica writes its environment, then trains; the jobs could use all 4 devices.
      const command = (name: string) => [
        'sh',
        '-c',
        `env > "$GOODPUT_CHECKPOINT_DIR/env-$GOODPUT_ATTEMPT-$RANK"; exec "${process.execPath}" "${TRAINER}" --samples 2000000 --time-scale 0.2`,
        name,
      ];
      const ids: string[] = [];
      for (const name of ['a', 'b'])
        ids.push((await server.client.submit({ name, command: command(name), workdir: data_dir, max_replicas: 4 })).id);
      await waitFor('both jobs to run and report', 60_000, async () =>
        (await Promise.all(ids.map((id) => server.client.getJob(id)))).every(
          (j) => j.state === 'running' && j.step > 3,
        ),
      );
      const seen: string[][] = [];
      for (let t = 0; t < 30; t++) {
        for (const id of ids) {
          const j = await server.client.getJob(id);
          if (j.devices.length > 0) seen.push(j.devices.map((d) => TYPE_OF[d]!));
          if (j.devices.length > 0 && j.state === 'running')
            assert.equal(j.gpu_type, TYPE_OF[j.devices[0]!], 'show names the type of its devices');
        }
        await sleep(500);
      }
      // `ls --json` names each job's type as `show` does.
      const ls = await runCli(['ls', '--data-dir', data_dir, '--json']);
      assert.equal(ls.status, 0, ls.stderr);
      const listed = JSON.parse(ls.stdout) as { id: string; devices: number[]; gpu_type: string | null }[];
      assert.deepEqual(listed.map((j) => j.id).sort(), [...ids].sort());
      for (const j of listed)
        assert.equal(
          j.gpu_type,
          j.devices.length > 0 ? TYPE_OF[j.devices[0]!] : null,
          `ls --json: ${JSON.stringify(j)}`,
        );
      assert.ok(
        listed.some((j) => j.gpu_type !== null),
        'a listed job holds devices',
      );
      assert.ok(
        seen.some((types) => types.length >= 2),
        `the jobs grew past one device: ${JSON.stringify(seen.slice(-4))}`,
      );
      for (const types of seen)
        assert.equal(new Set(types).size, 1, `a job held devices of two types: ${types.join(', ')}`);
      const show = await runCli(['show', ids[0]!, '--data-dir', data_dir]);
      assert.match(show.stdout, /of type NVIDIA (H100 80GB HBM3|L40S)/);
      // Every replica of every attempt was told the type of its own device.
      for (const id of ids) {
        const dir = join(data_dir, 'jobs', id, 'checkpoint');
        const envs = readdirSync(dir).filter((f) => f.startsWith('env-'));
        assert.ok(envs.length > 0);
        for (const f of envs) {
          const env = Object.fromEntries(
            readFileSync(join(dir, f), 'utf8')
              .split('\n')
              .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
          );
          const devices = env.CUDA_VISIBLE_DEVICES!.split(',').map(Number);
          assert.deepEqual(
            [...new Set(devices.map((d) => TYPE_OF[d]))],
            [env.GOODPUT_GPU_TYPE],
            `${id}/${f}: CUDA_VISIBLE_DEVICES=${env.CUDA_VISIBLE_DEVICES} GOODPUT_GPU_TYPE=${env.GOODPUT_GPU_TYPE}`,
          );
        }
      }
      for (const id of ids) await server.client.cancel(id);
    },
  );
});
