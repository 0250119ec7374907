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

/** The first `n` jobs of the philly workload, a second apart: alice owns all but the last, bob that one. */
function ownedWorkload(n: number, columns = true): string {
  const lines = readFileSync(join(dataDir!, 'workloads', 'philly', 'workload-1.csv'), 'utf8')
    .trim()
    .split('\n');
  const rows = lines.slice(1, n + 1).map((l, i) => {
    const cells = l.split(',');
    cells[1] = String(60 + i); // alice's flood, then bob's job, all within the first rounds
    return columns ? `${cells.join(',')},${i < n - 1 ? 'alice,vision' : 'bob,nlp'}` : cells.join(',');
  });
  const file = join(dir, `w${n}-${columns}.csv`);
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
    /** Runs 15 rounds; returns the last snapshot and how many rtx GPUs bob's job (the last) held at the end. */
    const run = async (file: string, policy: Policy) => {
      let last: ClusterSnapshot | undefined;
      let bob_rtx = 0;
      const result = simulateHetero(loadHeteroWorkload(file, apps), policy, nodes, {
        shares,
        max_rounds: 15,
        onDecision: (s, allocations) => {
          last = s;
          const bob = s.jobs[s.jobs.length - 1]!.id;
          bob_rtx = (allocations.get(bob) ?? []).filter((n) => gpuTypeOf(nodes[n]!) === 'rtx').length;
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
    assert.equal(shared.bob_rtx, 4, "bob's team holds its quota of 4 rtx");
    const blind = await run(ownedWorkload(6, false), await createPolicy('goodput', { seed: 0 }));
    assert.equal(blind.last.shares, undefined);
    assert.ok(blind.bob_rtx < 4, `user-blind, the same job holds ${blind.bob_rtx} rtx`);
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
