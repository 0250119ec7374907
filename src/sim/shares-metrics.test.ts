import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runWorkload } from './run-workload.js';
import { loadWorkload } from './workload.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-sim-shares-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const WORKLOAD =
  'name,time,application,num_replicas,batch_size,user,team\n' +
  'a0,0,cifar10,4,512,alice,vision\na1,0,cifar10,4,512,alice,vision\na2,0,cifar10,4,512,alice,vision\n' +
  'b0,60,cifar10,4,512,bob,nlp\n';

describe('simulated shares (goodput sim with user and team columns)', () => {
  it('reads user and team columns and reports per user and team, quota shortfall included', async () => {
    const file = join(dir, 'shared.csv');
    writeFileSync(file, WORKLOAD);
    assert.deepEqual(
      loadWorkload(file).jobs.map((j) => [j.user, j.team]),
      [
        ['alice', 'vision'],
        ['alice', 'vision'],
        ['alice', 'vision'],
        ['bob', 'nlp'],
      ],
    );
    const shares = {
      teams: [{ name: 'nlp', members: ['bob'], weight: 1, quota: { default: 4 } }],
      half_life_s: 86400,
    };
    const report = await runWorkload(file, { policy: 'tiresias', seed: 0, nodes: 2, gpus_per_node: 4, shares });
    const s = report.shares!;
    assert.deepEqual(Object.keys(s.users), ['alice', 'bob']);
    assert.deepEqual(Object.keys(s.teams), ['nlp', 'vision']);
    assert.equal(s.users['alice']!.jobs, 3);
    assert.ok(Math.abs(s.users['alice']!.gpu_share + s.users['bob']!.gpu_share - 1) < 1e-9);
    // bob's team gets its quota of 4 within 2 rounds of asking: no shortfall.
    assert.equal(s.teams['nlp']!.quota_shortfall_min, 0);
    const blind = await runWorkload(join(dir, 'shared.csv'), {
      policy: 'tiresias',
      seed: 0,
      nodes: 2,
      gpus_per_node: 4,
    });
    assert.ok(blind.shares !== undefined);
  });

  it("refuses a 'team' without a 'user'", () => {
    const file = join(dir, 'bad.csv');
    writeFileSync(file, 'name,time,application,num_replicas,batch_size,user,team\na,0,cifar10,1,128,,x\n');
    assert.throws(() => loadWorkload(file), /bad\.csv:2: column 'team' is set but 'user' is empty/);
  });
});
