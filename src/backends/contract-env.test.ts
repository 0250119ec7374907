import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  contractEnv,
  nodeVisibleDevices,
  parsePortRange,
  perRankLists,
  PICK_RANK_ENV,
  type ContractInput,
} from './contract-env.js';

const input: ContractInput = {
  job_id: 'j1',
  attempt: 2,
  rank_nodes: ['a', 'a', 'a', 'b'],
  master_addr: '10.0.0.1',
  master_port: 29501,
  api_url: 'http://x',
  token: 't',
  checkpoint_dir: '/c',
  restarts: 1,
  max_restarts: 3,
  preset: () => false,
};

describe('contract environment', () => {
  it('sets what torchrun sets for its workers, per rank and for all', () => {
    const { common, ranks } = contractEnv(input);
    assert.deepEqual(
      { ...common, GOODPUT_TOKEN: undefined },
      {
        WORLD_SIZE: '4',
        ROLE_WORLD_SIZE: '4',
        ROLE_NAME: 'default',
        GROUP_WORLD_SIZE: '2',
        MASTER_ADDR: '10.0.0.1',
        MASTER_PORT: '29501',
        TORCHELASTIC_RESTART_COUNT: '1',
        TORCHELASTIC_MAX_RESTARTS: '3',
        TORCHELASTIC_RUN_ID: 'j1',
        TORCHELASTIC_USE_AGENT_STORE: 'False',
        GOODPUT_API: 'http://x',
        GOODPUT_JOB_ID: 'j1',
        GOODPUT_TOKEN: undefined,
        GOODPUT_CHECKPOINT_DIR: '/c',
        GOODPUT_ATTEMPT: '2',
        GOODPUT_NUM_NODES: '2',
        PYTHONUNBUFFERED: '1',
      },
    );
    assert.deepEqual(ranks[2], {
      RANK: '2',
      ROLE_RANK: '2',
      LOCAL_RANK: '2',
      LOCAL_WORLD_SIZE: '3',
      GROUP_RANK: '0',
      OMP_NUM_THREADS: '1',
    });
    assert.deepEqual(
      ranks[3],
      { RANK: '3', ROLE_RANK: '3', LOCAL_RANK: '0', LOCAL_WORLD_SIZE: '1', GROUP_RANK: '1' },
      'one rank on its node: no OMP_NUM_THREADS, as torchrun',
    );
  });

  it('leaves OMP_NUM_THREADS and PYTHONUNBUFFERED to the user when their environment sets them', () => {
    const omp = contractEnv({ ...input, preset: (name) => name === 'OMP_NUM_THREADS' });
    assert.equal(omp.ranks[0]!.OMP_NUM_THREADS, undefined);
    assert.equal(omp.common.PYTHONUNBUFFERED, '1');
    const unbuffered = contractEnv({ ...input, preset: (name) => name === 'PYTHONUNBUFFERED' });
    assert.equal(unbuffered.common.PYTHONUNBUFFERED, undefined);
    assert.equal(unbuffered.ranks[0]!.OMP_NUM_THREADS, '1');
  });

  it('ships per-rank values as lists a task picks from by its rank (the Slurm path)', () => {
    const lists = perRankLists(contractEnv(input).ranks);
    for (const idx of [0, 3]) {
      const out = execFileSync('/bin/sh', ['-c', `idx=${idx}\n${PICK_RANK_ENV}\nenv`], {
        env: { PATH: process.env.PATH, ...lists },
        encoding: 'utf8',
      });
      const env = Object.fromEntries(
        out
          .trim()
          .split('\n')
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      const want = contractEnv(input).ranks[idx]!;
      for (const [k, v] of Object.entries(want)) assert.equal(env[k], v, `rank ${idx}: ${k}`);
      if (idx === 3) assert.equal(env.OMP_NUM_THREADS, undefined);
      assert.equal(
        Object.keys(env).some((k) => k.startsWith('GOODPUT_RANKS')),
        false,
        'the lists are removed',
      );
    }
  });

  it("shows a rank its node's devices of the job in rank order, its own at LOCAL_RANK", () => {
    const devices = [2, 0, 3, 1];
    const seen = input.rank_nodes.map((_, rank) => nodeVisibleDevices(input.rank_nodes, devices, rank));
    assert.deepEqual(seen, ['2,0,3', '2,0,3', '2,0,3', '1']);
    const { ranks } = contractEnv(input);
    seen.forEach((list, rank) => assert.equal(Number(list.split(',')[Number(ranks[rank]!.LOCAL_RANK)]), devices[rank]));
  });

  it('parses --port-range', () => {
    assert.deepEqual(parsePortRange('29500-29999'), { first: 29500, last: 29999 });
    for (const bad of ['29500', '2-1', '0-10', '1-70000', 'a-b'])
      assert.throws(() => parsePortRange(bad), /FIRST-LAST/);
  });
});
