import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSnapshot, NodeInfo, PolicyJob, TeamShare } from '../../core/cluster.js';
import { fifoPolicy } from '../fifo.js';
import type { Policy } from '../policy.js';
import { goodputPolicy } from '../goodput/index.js';
import { job } from '../goodput/test-jobs.js';
import { validateDecision } from '../validate-decision.js';
import { entitle, waterFill } from './entitle.js';
import { withShares } from './layer.js';

const slots = (n: number, type = 'cpu'): NodeInfo[] => [
  { index: 0, name: 'host', gpus: n, preemptible: false, gpu_type: type },
];
const fifo = () => withShares(() => fifoPolicy.create({ seed: 0 }));
const plain = (id: string, owner: string, at = 0, over: Partial<PolicyJob> = {}) =>
  job(id, { owner, team: owner, max_replicas: 1, min_replicas: 1, submitted_at_s: at, ...over });
/** `n` one-slot jobs of alice, submitted at 0, 1, 2, ... s. */
const alices = (n: number, over: Partial<PolicyJob> = {}) =>
  Array.from({ length: n }, (_, i) => plain(`alice-${i}`, 'alice', i, over));
/** 4 cpu slots at 30 s, all held by alice's first four jobs; `jobs` are every job of the snapshot. */
const aliceHoldsAll = (jobs: PolicyJob[]): ClusterSnapshot => ({
  now_s: 30,
  nodes: slots(4),
  jobs,
  allocations: { 'alice-0': [0], 'alice-1': [0], 'alice-2': [0], 'alice-3': [0] },
});
const count = (d: { allocations: Record<string, readonly number[]> }, prefix: string) =>
  Object.entries(d.allocations).reduce((s, [id, a]) => s + (id.startsWith(prefix) ? a.length : 0), 0);

describe('shares layer', () => {
  it('passes a snapshot of one owner (or none) through unchanged', () => {
    const jobs = [job('a', { max_profiled_replicas: 2 }), job('b'), job('c', { submitted_at_s: 5 })];
    const snap: ClusterSnapshot = { now_s: 3600, nodes: slots(8, 'a100'), jobs, allocations: { a: [0, 0] } };
    const direct = goodputPolicy.create({ seed: 3 }).decide(snap);
    const layered = withShares(() => goodputPolicy.create({ seed: 3 })).decide(snap);
    assert.deepEqual(layered, direct);
    const mine = { ...snap, jobs: jobs.map((j) => ({ ...j, owner: 'alice', team: 'alice' })) };
    assert.deepEqual(withShares(() => goodputPolicy.create({ seed: 3 })).decide(mine), direct);
  });

  it("gives a second user half of the slots a first user's batch filled (issue 48 live case)", () => {
    const snap = aliceHoldsAll([...alices(6), plain('bob-0', 'bob', 25), plain('bob-1', 'bob', 26)]);
    const d = fifo().decide(snap);
    assert.ok(validateDecision(snap, d.allocations).ok);
    assert.equal(count(d, 'bob'), 2);
    assert.equal(count(d, 'alice'), 2);
    // The two most recently started of alice's jobs stop, and the event says why.
    assert.deepEqual(Object.keys(d.notes ?? {}).sort(), ['alice-2', 'alice-3']);
    assert.match(d.notes!['alice-3']!, /stopped \(1 -> 0\) to return 1 cpu to team bob's fair share/);
    assert.match(
      d.rejections!['alice-4']!.message,
      /team alice holds its fair share \(50% of the cluster for a share of 50%\)/,
    );
  });

  it('returns a quota within one round by shrinking the borrower, not stopping it', () => {
    const teams: TeamShare[] = [
      { name: 'X', members: ['xavier'], weight: 1, quota: { cpu: 2 } },
      { name: 'Y', members: ['yuki'], weight: 3, quota: {} },
    ];
    const y = job('y', { owner: 'yuki', team: 'Y', min_replicas: 1, max_replicas: 4, max_profiled_replicas: 4 });
    const x = job('x', { owner: 'xavier', team: 'X', min_replicas: 2, max_replicas: 2, submitted_at_s: 60 });
    const snap: ClusterSnapshot = {
      now_s: 60,
      nodes: slots(4),
      jobs: [y, x],
      allocations: { y: [0, 0, 0, 0] },
      shares: { teams, half_life_s: 7 * 86400 },
    };
    const d = fifo().decide(snap);
    assert.deepEqual(d.allocations, { y: [0, 0], x: [0, 0] });
    assert.equal(d.notes!['y'], "shrank 4 -> 2 to return 2 cpu to team X's quota");
  });

  it('lends what a user cannot use (work conserving)', () => {
    const snap = aliceHoldsAll([...alices(4), plain('bob-0', 'bob', 25)]);
    const d = fifo().decide(snap);
    assert.equal(count(d, 'bob'), 1);
    assert.equal(count(d, 'alice'), 3);
  });

  it('gives what is left over its plain shares by past usage, never less than a share; deterministic', () => {
    const bob = Array.from({ length: 4 }, (_, i) => plain(`bob-${i}`, 'bob', i));
    const snap: ClusterSnapshot = {
      now_s: 30,
      nodes: slots(5),
      jobs: [...alices(4), ...bob],
      allocations: {},
      shares: { teams: [], half_life_s: 86400, usage: { at_s: 30, teams: { alice: 9000, bob: 1000 }, users: {} } },
    };
    const d = fifo().decide(snap);
    assert.deepEqual([count(d, 'alice'), count(d, 'bob')], [2, 3]);
    assert.deepEqual(fifo().decide(snap), d);
    const reversed = {
      ...snap,
      shares: { ...snap.shares!, usage: { at_s: 30, teams: { alice: 1, bob: 9 }, users: {} } },
    };
    assert.deepEqual([count(fifo().decide(reversed), 'alice'), count(fifo().decide(reversed), 'bob')], [3, 2]);
  });

  it("returns the inner policy's decision where it leaves nobody below a floor, and starts a waiting job where not", () => {
    const jobs = [
      job('a', { owner: 'ann', team: 'ann', max_profiled_replicas: 2 }),
      job('b', { owner: 'ben', team: 'ben', max_profiled_replicas: 2 }),
    ];
    const at = (allocations: ClusterSnapshot['allocations']): ClusterSnapshot => ({
      now_s: 3600,
      nodes: slots(8, 'a100'),
      jobs,
      allocations,
    });
    const layered = (snap: ClusterSnapshot) => withShares(() => goodputPolicy.create({ seed: 3 })).decide(snap);
    // Both on 2: goodput alone grows ann to 7 and shrinks ben to 1; ben's job still runs, so
    // nobody is below a floor and the decision stands.
    const running = at({ a: [0, 0], b: [0, 0] });
    const direct = goodputPolicy.create({ seed: 3 }).decide(running).allocations;
    assert.deepEqual([direct['a']!.length, direct['b']!.length], [7, 1]);
    assert.deepEqual(layered(running).allocations, direct);
    // Ann's 8 one-device jobs hold all 8: goodput alone leaves ben's new one waiting (a restart
    // gains nothing); the layer starts it, his fair part, by stopping ann's most recent job.
    const one = { max_replicas: 1, min_replicas: 1, max_profiled_replicas: 1 };
    const anns = Array.from({ length: 8 }, (_, i) =>
      job(`ann-${i}`, { owner: 'ann', team: 'ann', ...one, submitted_at_s: i }),
    );
    const full: ClusterSnapshot = {
      ...at(Object.fromEntries(anns.map((j) => [j.id, [0]]))),
      jobs: [...anns, job('ben-0', { owner: 'ben', team: 'ben', ...one, submitted_at_s: 100 })],
    };
    assert.equal(goodputPolicy.create({ seed: 3 }).decide(full).allocations['ben-0'], undefined);
    const shared = layered(full);
    assert.deepEqual([count(shared, 'ann'), count(shared, 'ben')], [7, 1]);
    assert.deepEqual(shared.notes, { 'ann-7': "stopped (1 -> 0) to return 1 a100 to team ben's fair share" });
  });

  it('names in the note only the devices the layer took, not a shrink the inner policy made itself', () => {
    // An inner policy that always shrinks job a by one and starts waiting jobs on what is free.
    const shrinker = (): Policy => ({
      name: 'shrinker',
      decide(snap) {
        const allocations: Record<string, number[]> = {};
        let free = snap.nodes[0]!.gpus;
        for (const j of snap.jobs) {
          const a = [...(snap.allocations[j.id] ?? [])];
          if (j.id === 'a') a.pop();
          if (a.length === 0 && free > 0) a.push(0);
          free -= a.length;
          if (a.length > 0) allocations[j.id] = a;
        }
        return { allocations };
      },
    });
    const snap: ClusterSnapshot = {
      now_s: 30,
      nodes: slots(4),
      jobs: [job('a', { owner: 'alice', team: 'alice', min_replicas: 1, max_replicas: 4 }), plain('b', 'bob', 25)],
      allocations: { a: [0, 0, 0, 0] },
    };
    const d = withShares(shrinker).decide(snap);
    assert.deepEqual(d.allocations, { a: [0, 0], b: [0] });
    assert.equal(d.notes!['a'], "shrank 4 -> 2 to return 1 cpu to team bob's fair share");
  });

  it('never touches a non-preemptible job', () => {
    const snap = aliceHoldsAll([...alices(4, { preemptible: false }), plain('bob-0', 'bob', 25)]);
    const d = fifo().decide(snap);
    assert.equal(count(d, 'alice'), 4);
    assert.equal(count(d, 'bob'), 0);
  });
});

describe('waterFill', () => {
  it('splits by weight up to demands, in whole devices, ties by name', () => {
    const claims = new Map([
      ['a', { demand: 10, weight: 1 }],
      ['b', { demand: 1, weight: 1 }],
      ['c', { demand: 10, weight: 2 }],
    ]);
    assert.deepEqual(Object.fromEntries(waterFill(10, claims)), { a: 3, b: 1, c: 6 });
    const even = new Map([
      ['a', { demand: 9, weight: 1 }],
      ['b', { demand: 9, weight: 1 }],
    ]);
    assert.deepEqual(Object.fromEntries(waterFill(5, even)), { a: 3, b: 2 });
  });
});

describe('entitle', () => {
  const teams: TeamShare[] = [
    { name: 'light-a', members: ['u1', 'u2'], weight: 2, quota: { default: 16 } },
    { name: 'light-b', members: ['u3', 'u4'], weight: 2, quota: { default: 16 } },
    { name: 'sweep', members: ['sweeper'], weight: 1, quota: {} },
  ];
  const busy = (user: string, team: string) => ({ user, team, demand: 64 });
  const users = [busy('u1', 'light-a'), busy('u2', 'light-a'), busy('u3', 'light-b'), busy('u4', 'light-b')];

  it('counts a quota inside its weighted share: every user of the bench teams gets a fifth', () => {
    const ent = entitle(new Map([['default', 64]]), [...users, busy('sweeper', 'sweep')], teams, undefined, 1);
    const got = Object.fromEntries([...ent.by_user].map(([u, m]) => [u, m.get('default')]));
    // 64 * 2/5 = 25.6 per light team (above its quota of 16), 12.8 for the sweep team.
    for (const u of ['u1', 'u2', 'u3', 'u4', 'sweeper']) assert.ok(got[u]! >= 12, `${u}: ${got[u]}`);
    assert.equal(
      Object.values(got).reduce((s: number, x) => s + (x ?? 0), 0),
      64,
    );
  });

  it("keeps a team's demand for its quota type: an earlier type's share does not use it up", () => {
    const quota: TeamShare[] = [{ name: 'nlp', members: ['bob'], weight: 1, quota: { rtx: 4 } }];
    const types = new Map([
      ['aws', 4],
      ['rtx', 8],
    ]);
    const ent = entitle(types, [{ user: 'bob', team: 'nlp', demand: 4 }, busy('alice', 'vision')], quota, undefined, 1);
    assert.deepEqual(Object.fromEntries(ent.by_user.get('bob')!), { aws: 0, rtx: 4 });
    assert.deepEqual(Object.fromEntries(ent.guaranteed.get('nlp')!), { aws: 0, rtx: 4 });
  });

  it('keeps a quota above the weighted share whole, the others share the rest by weight', () => {
    const big: TeamShare[] = [
      { name: 'a', members: ['a1'], weight: 1, quota: { default: 48 } },
      { name: 'b', members: ['b1'], weight: 2, quota: {} },
    ];
    const ent = entitle(
      new Map([['default', 64]]),
      [busy('a1', 'a'), busy('b1', 'b'), busy('c1', 'c')],
      big,
      undefined,
      1,
    );
    const got = (u: string) => ent.by_user.get(u)!.get('default');
    // Shares 16/32/16: a's quota of 48 is kept whole; the other 16 split 2:1.
    assert.deepEqual([got('a1'), got('b1'), got('c1')], [48, 11, 5]);
  });
});
