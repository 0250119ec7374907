import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Allocation } from '../../core/cluster.js';
import { job } from '../goodput/test-jobs.js';
import type { Entitlements } from './entitle.js';
import { floorGaps, topUp } from './floors.js';

/** Entitlements with the given per-user, per-type devices and per-team quotas (guaranteed). */
const ents = (
  by_user: Record<string, Record<string, number>>,
  guaranteed: Record<string, Record<string, number>> = {},
): Entitlements => ({
  by_user: new Map(Object.entries(by_user).map(([u, m]) => [u, new Map(Object.entries(m))])),
  guaranteed: new Map(Object.entries(guaranteed).map(([t, m]) => [t, new Map(Object.entries(m))])),
  team_factor: new Map(),
  team_share: new Map(),
});
const held = (h: Record<string, Record<string, number>>) =>
  new Map(Object.entries(h).map(([u, m]) => [u, new Map(Object.entries(m))]));

describe('floorGaps', () => {
  it("gives a team's quota deficit to the member with the most entitlement left, then fair parts; most deprived first", () => {
    const teamOf = new Map([
      ['ann', 'vision'],
      ['ben', 'vision'],
      ['cy', 'nlp'],
    ]);
    const ent = ents(
      { ann: { a100: 2, v100: 2 }, ben: { a100: 4, v100: 0 }, cy: { a100: 2, v100: 6 } },
      { vision: { a100: 4 }, nlp: {} },
    );
    const now = held({ ann: { a100: 1, v100: 0 }, ben: { a100: 1, v100: 0 }, cy: { a100: 2, v100: 6 } });
    const gaps = floorGaps(
      ['ann', 'ben', 'cy'],
      teamOf,
      now,
      ent,
      new Map([
        ['ann', 4],
        ['ben', 1],
        ['cy', 8],
      ]),
    );
    // vision holds 2 of its 4 a100: ben has 3 left on a100, ann 1, so ben takes both; ann's fair
    // part (4 in all, 1 held) is then found on the type with the most left (v100, then a100).
    assert.deepEqual(
      gaps.map((g) => [g.user, Object.fromEntries(g.more), [...g.quota_types]]),
      [
        ['ann', { v100: 2, a100: 1 }, []],
        ['ben', { a100: 2 }, ['a100']],
      ],
    );
  });

  it('leaves out users at their floors and never asks beyond an entitlement', () => {
    const teamOf = new Map([['ann', 'ann']]);
    const ent = ents({ ann: { a100: 2 } });
    assert.deepEqual(floorGaps(['ann'], teamOf, held({ ann: { a100: 2 } }), ent, new Map([['ann', 5]])), []);
    const gaps = floorGaps(['ann'], teamOf, held({ ann: { a100: 0 } }), ent, new Map([['ann', 5]]));
    assert.deepEqual(Object.fromEntries(gaps[0]!.more), { a100: 2 });
  });
});

describe('topUp', () => {
  const typeOf = ['a100', 'a100', 'v100'];
  it('starts waiting jobs at their minimum, then grows running jobs of the type up to their demand', () => {
    const jobs = [
      job('run', { min_replicas: 1 }),
      job('wait', { min_replicas: 2 }),
      job('fixed', { preemptible: false }),
      job('other', {}),
    ];
    const allocations: Record<string, Allocation> = { run: [0], fixed: [1], other: [2] };
    const spare = [2, 3, 4];
    const added = topUp(jobs, allocations, spare, typeOf, 'a100', 10, (j) => (j.id === 'run' ? 3 : 4));
    // wait starts with 2 on the node with most spare (1); then the smallest grows first: run
    // 1 -> 3 on its own node, wait 2 -> 3 with the last a100; the non-preemptible job and the
    // v100 job are not touched, and the v100 spare stays.
    assert.deepEqual(allocations, { run: [0, 0, 0], wait: [1, 1, 1], fixed: [1], other: [2] });
    assert.equal(added, 5);
    assert.deepEqual(spare, [0, 0, 4]);
  });

  it('adds no more than asked, and nothing a job cannot start with', () => {
    const allocations: Record<string, Allocation> = {};
    const spare = [1, 0, 0];
    assert.equal(
      topUp([job('big', { min_replicas: 2 })], allocations, spare, typeOf, 'a100', 5, () => 4),
      0,
    );
    assert.deepEqual(allocations, {});
    const two: Record<string, Allocation> = { a: [0] };
    assert.equal(
      topUp([job('a')], two, [3, 0, 0], typeOf, 'a100', 1, () => 8),
      1,
    );
    assert.deepEqual(two, { a: [0, 0] });
  });
});
