/**
 * `goodput sim --cluster` with a workload that names users (issue 48): the mixed-type simulator
 * gives the policy each job's owner and team and the decayed usage, the shares layer runs over the
 * policy, quotas name the cluster's types, and the report has per user and team figures; a
 * workload without users runs as before.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gpuTypeOf, type ClusterSnapshot } from '../../core/cluster.js';
import type { Policy } from '../../policy/policy.js';
import { createPolicy, createSharedPolicy } from '../../policy/registry.js';
import { simCommand } from '../../cli/commands/sim.js';
import type { GoodputError } from '../../core/errors.js';
import { packagePath } from '../../util/package-root.js';
import { clusterNodes, loadHeteroWorkload, parseClusterSpec, simulateHetero } from './hetero-sim.js';
import { runHeteroWorkload } from './run-hetero.js';
import { loadHeteroApplications } from './typed-app.js';

const dataDir = [packagePath('..', 'shared', 'data', 'sia'), packagePath('..', '..', 'shared', 'data', 'sia')].find(
  (d) => existsSync(join(d, 'traces')),
);
const skip = dataDir === undefined ? 'no ../shared/data/sia' : false;
const CLUSTER = 'aws:1x4,rtx:1x8';
const dir = mkdtempSync(join(tmpdir(), 'goodput-hetero-shares-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The first `n` jobs of the philly workload: alice's all but the last, a second apart from t=60;
 * bob's the last, submitted at `bob_s` (by default right after hers).
 */
function ownedWorkload(n: number, columns = true, bob_s = 60 + n - 1): string {
  const lines = readFileSync(join(dataDir!, 'workloads', 'philly', 'workload-1.csv'), 'utf8')
    .trim()
    .split('\n');
  const rows = lines.slice(1, n + 1).map((l, i) => {
    const cells = l.split(',');
    cells[1] = String(i < n - 1 ? 60 + i : bob_s);
    return columns ? `${cells.join(',')},${i < n - 1 ? 'alice,vision' : 'bob,nlp'}` : cells.join(',');
  });
  const file = join(dir, `w${n}-${columns}-${bob_s}.csv`);
  writeFileSync(file, [`${lines[0]}${columns ? ',user,team' : ''}`, ...rows].join('\n') + '\n');
  return file;
}

describe('goodput sim --cluster with users and teams', { skip }, () => {
  const shares = {
    teams: [{ name: 'nlp', members: ['bob'], weight: 1, quota: { rtx: 4 } }],
    half_life_s: 86400,
  };

  it('gives the policy owners, teams and decayed usage; the shares layer gives a team its quota on its type', async () => {
    const apps = loadHeteroApplications(join(dataDir!, 'traces'), ['aws', 'rtx']);
    const nodes = clusterNodes(parseClusterSpec(CLUSTER));
    /**
     * Runs `rounds` rounds (each decision checked by the simulator: no over-commit); returns the last
     * snapshot and how many rtx GPUs bob's job (the last) held after each round it was in.
     */
    const run = async (file: string, policy: Policy, rounds = 15) => {
      let last: ClusterSnapshot | undefined;
      const bob_rtx: number[] = [];
      const workload = loadHeteroWorkload(file, apps);
      const bob_id = workload.at(-1)!.name;
      const result = simulateHetero(workload, policy, nodes, {
        shares,
        max_rounds: rounds,
        onDecision: (s, allocations) => {
          last = s;
          const bob = s.jobs.find((j) => j.id === bob_id);
          if (bob) bob_rtx.push((allocations.get(bob.id) ?? []).filter((n) => gpuTypeOf(nodes[n]!) === 'rtx').length);
        },
      });
      return { result, last: last!, bob_rtx };
    };
    const shared = await run(ownedWorkload(6), await createSharedPolicy('goodput', { seed: 0 }));
    assert.ok(shared.last.jobs.every((j) => (j.owner === 'bob' ? j.team === 'nlp' : j.team === 'vision')));
    assert.deepEqual(shared.last.shares?.teams, shares.teams);
    assert.ok((shared.last.shares?.usage?.teams['vision'] ?? 0) > 0, 'usage charged on simulated time');
    assert.deepEqual(
      shared.result.jobs.map((j) => j.user),
      [...Array(5).fill('alice'), 'bob'],
    );
    assert.equal(shared.bob_rtx.at(-1), 4, "bob's team holds its quota of 4 rtx");
    const blind = await run(ownedWorkload(6, false), await createPolicy('goodput', { seed: 0 }));
    assert.equal(blind.last.shares, undefined);
    assert.ok(blind.bob_rtx.at(-1)! < 4, `user-blind, the same job holds ${blind.bob_rtx.at(-1)} rtx`);
    // Bob comes once alice's jobs hold every rtx GPU: his quota type is reclaimed for him within 2
    // rounds (a decision that over-commits a node fails the run: the simulator checks each one).
    const late = await run(ownedWorkload(6, true, 600), await createSharedPolicy('goodput', { seed: 0 }), 12);
    const lateBlind = await run(ownedWorkload(6, false, 600), await createPolicy('goodput', { seed: 0 }), 12);
    assert.ok(late.bob_rtx.length >= 2 && lateBlind.bob_rtx.length >= 2);
    assert.ok(
      late.bob_rtx[1]! > lateBlind.bob_rtx[1]!,
      `within 2 rounds: ${late.bob_rtx[1]} rtx with the quota, ${lateBlind.bob_rtx[1]} user-blind`,
    );
  });

  it('reports per user and team; without users, no shares and the same result', async () => {
    const settings = { policy: 'goodput', cluster: CLUSTER, traces_dir: join(dataDir!, 'traces'), seed: 0 };
    const owned = await runHeteroWorkload(ownedWorkload(6), { ...settings, shares });
    const s = owned.shares!;
    assert.deepEqual(Object.keys(s.users), ['alice', 'bob']);
    assert.deepEqual(Object.keys(s.teams), ['nlp', 'vision']);
    assert.ok(Math.abs(s.users['alice']!.gpu_share + s.users['bob']!.gpu_share - 1) < 1e-9);
    const plain = await runHeteroWorkload(ownedWorkload(6, false), settings);
    assert.equal(plain.shares, undefined);
  });

  it('refuses, before simulating, a quota on a GPU type the simulated cluster does not have (E_SHARES)', async () => {
    const file = join(dir, 'a100.yaml');
    writeFileSync(file, 'teams:\n  nlp:\n    members: [bob]\n    quota: {a100: 4}\n');
    const common = ['--policy', 'goodput', '--workload', ownedWorkload(6), '--shares', file];
    const refused = (types: string) => (e: unknown) =>
      (e as GoodputError).code === 'E_SHARES' &&
      new RegExp(`quota names GPU type 'a100', which the cluster does not have \\(its types: ${types}\\)`).test(
        (e as Error).message,
      );
    await assert.rejects(
      simCommand.run([...common, '--cluster', CLUSTER, '--traces', join(dataDir!, 'traces')]),
      refused('aws, rtx'),
    );
    await assert.rejects(simCommand.run(common), refused('default'));
  });
});
