/**
 * Sharing the cluster between people (issue 48), decided in fake time (FakeBackend and
 * FakeClock, test-support/control/fake-plane.ts): a second user gets half of the slots a first
 * user's batch filled within a few rounds, a team's quota comes back within 2 rounds by shrinking
 * the borrower (and its events say why), and the decayed usage is kept in the store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SharesConfig } from '../policy/shares/index.js';
import { fakePlain, fakePlane, fakeTrainer, type FakePlane } from '../../test-support/control/fake-plane.js';

const INTERVAL_S = 5;

async function holding(plane: FakePlane, ids: readonly string[]): Promise<number> {
  const jobs = await Promise.all(ids.map((id) => plane.job(id)));
  return jobs.filter((j) => j.state === 'running').reduce((s, j) => s + j.allocation.length, 0);
}

describe('shares (fake backend and clock)', () => {
  it("bob's jobs get half of the 4 slots alice's 6 preemptible jobs filled, within 3 rounds", async () => {
    const plane = await fakePlane({ slots: 4, interval_s: INTERVAL_S, grace_s: 2 });
    try {
      const alice: string[] = [];
      for (let i = 0; i < 6; i++)
        alice.push((await plane.submit({ name: `a-${i}`, command: fakePlain(3600), preemptible: true }, 'alice')).id);
      await plane.waitFor('alice to fill the slots', 30, async () =>
        (await holding(plane, alice)) === 4 ? 1 : undefined,
      );
      const bob: string[] = [];
      for (let i = 0; i < 2; i++)
        bob.push((await plane.submit({ name: `b-${i}`, command: fakePlain(3600), preemptible: true }, 'bob')).id);
      const t0 = plane.clock.now_ms();
      await plane.waitFor('bob to hold 2 slots', 3 * INTERVAL_S + 5, async () =>
        (await holding(plane, bob)) === 2 ? 1 : undefined,
      );
      assert.ok(plane.clock.now_ms() - t0 <= (3 * INTERVAL_S + 5) * 1000);
      // They stay that way: several rounds later both still hold 2.
      await plane.clock.advance(6 * INTERVAL_S * 1000);
      assert.equal(await holding(plane, bob), 2);
      assert.equal(await holding(plane, alice), 2);
      const reasons = (await Promise.all(alice.map((id) => plane.store.listEvents(id)))).flat().map((e) => e.reason);
      assert.ok(
        reasons.some((r) => /stopped \(1 -> 0\) to return 1 CPU slot to team bob's fair share/.test(r)),
        reasons.join('\n'),
      );
      const waiting = [...plane.controller.rejections.values()].map((r) => r.message);
      assert.ok(
        waiting.some((m) => /team alice holds its fair share \(50% of the cluster for a share of 50%\)/.test(m)),
      );
      // The decayed usage reaches the store at most once a minute.
      await plane.clock.advance(61_000);
      const usage = await plane.store.getShareUsage();
      assert.ok((usage?.users['alice'] ?? 0) > (usage?.users['bob'] ?? 0), JSON.stringify(usage));
    } finally {
      await plane.close();
    }
  });

  it("team X's quota of 2 slots comes back within 2 rounds: team Y's elastic jobs shrink, and say why", async () => {
    const shares: SharesConfig = {
      teams: [
        { name: 'X', members: ['xavier'], weight: 1, quota: { cpu: 2 } },
        { name: 'Y', members: ['yuki'], weight: 1, quota: {} },
      ],
      half_life_s: 7 * 86400,
    };
    const plane = await fakePlane({ slots: 4, interval_s: INTERVAL_S, grace_s: 2, shares: () => shares });
    try {
      const y: string[] = [];
      for (let i = 0; i < 2; i++) {
        const spec = { name: `y-${i}`, command: fakeTrainer({ samples: 10_000_000 }), max_replicas: 4 };
        y.push((await plane.submit(spec, 'yuki')).id);
      }
      await plane.waitFor('Y to borrow all 4 slots', 300, async () =>
        (await holding(plane, y)) === 4 ? 1 : undefined,
      );
      const t0 = plane.clock.now_ms();
      const x = (
        await plane.submit(
          { name: 'x', command: fakePlain(3600), min_replicas: 2, max_replicas: 2, preemptible: true },
          'xavier',
        )
      ).id;
      await plane.waitFor('X to hold its quota', 2 * INTERVAL_S + 5, async () =>
        (await holding(plane, [x])) === 2 ? 1 : undefined,
      );
      assert.ok(plane.clock.now_ms() - t0 <= (2 * INTERVAL_S + 5) * 1000);
      const reasons = (await Promise.all(y.map((id) => plane.store.listEvents(id)))).flat().map((e) => e.reason);
      assert.ok(
        reasons.some((r) => /(shrank \d -> \d|stopped \(\d -> 0\)) to return \d CPU slots? to team X's quota/.test(r)),
        reasons.join('\n'),
      );
    } finally {
      await plane.close();
    }
  });
});
