import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendNode } from '../../backends/backend.js';
import type { RankSummaryBody } from '../../core/rank-wire.js';
import type { JobRecord } from '../../store/types.js';
import { assignDevices } from '../loop/device-binding.js';
import { typedInventory } from '../loop/typed-nodes.js';
import { DeviceHealth, healthAdjusted } from './device-health.js';
import { RankBook } from './rank-book.js';

const node = (name: string, n: number): BackendNode => ({
  name,
  address: name,
  devices: Array.from({ length: n }, (_, index) => ({ index, kind: 'gpu' as const, name: 'A100' })),
  usable: n,
  note: '',
});

/** Devices a new gang of `size` replicas on machine 0 gets, the others holding `busy`. */
function place(nodes: readonly BackendNode[], size: number, busy: readonly number[] = []): number[] {
  const inv = typedInventory(nodes);
  const holder = {
    id: 'old',
    state: 'running',
    allocation: busy.map(() => 0),
    devices: [...busy],
  } as unknown as JobRecord;
  const gang = { id: 'new', state: 'queued', allocation: [], devices: [] } as unknown as JobRecord;
  const jobs = busy.length > 0 ? [holder, gang] : [gang];
  const allocations = {
    new: Array.from({ length: size }, () => 0),
    ...(busy.length > 0 ? { old: holder.allocation } : {}),
  };
  const got = assignDevices(
    jobs,
    allocations,
    inv.groups.map((g) => g.usable),
    inv.nodes,
  );
  assert.ok(got.ok, got.ok ? '' : got.reason);
  return got.devices.get('new')!;
}

describe('device health fed back to placement', () => {
  it('a device straggling in two jobs is marked slow, and the next gang avoids it while an equal one is free', () => {
    const health = new DeviceHealth();
    assert.equal(health.straggled('a', 0, 'job1#0', 1), undefined);
    assert.equal(health.straggled('a', 0, 'job1#0', 2), undefined, 'the same attempt counts once');
    const mark = health.straggled('a', 0, 'job2#0', 3);
    assert.equal(mark?.kind, 'slow');
    const nodes = [node('a', 4)];
    assert.deepEqual(place(nodes, 2), [0, 1], 'without marks: index order');
    const adjusted = healthAdjusted(nodes, health.marks());
    assert.deepEqual(place(adjusted, 2), [1, 2]);
    assert.equal(adjusted[0]!.usable, 4, 'a slow device stays usable');
    // No equal choice left: the slow device is taken rather than nothing.
    assert.deepEqual(place(adjusted, 2, [1, 2]), [3, 0]);
    assert.match(adjusted[0]!.note, /device 0 slow \(its ranks straggled in 2 jobs\)/);
  });

  it('a device whose rank hung is drained until an admin clears it', () => {
    const health = new DeviceHealth();
    health.hung('a', 1, 'job1#0', 5);
    const adjusted = healthAdjusted([node('a', 4), node('b', 2)], health.marks());
    assert.equal(adjusted[0]!.usable, 3);
    assert.deepEqual(
      adjusted[0]!.devices.map((d) => d.index),
      [0, 2, 3, 1],
    );
    assert.deepEqual(adjusted[1], node('b', 2));
    assert.deepEqual(place(adjusted, 3), [0, 2, 3]);
    assert.deepEqual(health.clear('b'), []);
    assert.equal(health.clear('a', 1)[0]?.kind, 'drained');
    assert.deepEqual(healthAdjusted([node('a', 4)], health.marks()), [node('a', 4)]);
  });

  it('keeps devices others hold beyond usable last', () => {
    const held: BackendNode = { ...node('a', 4), usable: 3, note: '1 held by other work' };
    const health = new DeviceHealth();
    health.hung('a', 0, 'j#0', 1);
    const [n] = healthAdjusted([held], health.marks());
    assert.equal(n!.usable, 2);
    assert.deepEqual(
      n!.devices.map((d) => d.index),
      [1, 2, 0, 3],
    );
    assert.match(n!.note, /^1 held by other work; device 0 drained/);
  });
});

const body = (attempt: number, rank: number, steps: number, step: number): RankSummaryBody => ({
  attempt,
  rank,
  window: { steps, data_wait_s: 0, compute_s: steps * 0.1, sync_s: 0, between_s: 0, step, phase: 'step', phase_s: 0 },
});

describe('RankBook', () => {
  it('keeps a bounded window per rank, progress on the control plane clock, and one attempt per job', () => {
    const book = new RankBook(4);
    for (let i = 0; i < 10; i++) book.add('j', body(0, 0, 5, 5 * (i + 1)), 1000 * i);
    book.add('j', body(0, 0, 0, 50), 20_000); // a heartbeat with no step
    const where = () => ({ node: 'a', device: 0 });
    const [r] = book.ranks('j', 0, where);
    assert.equal(r!.windows.length, 4);
    assert.equal(r!.progress_ms, 9000);
    assert.equal(r!.last_heard_ms, 20_000);
    assert.equal(r!.step, 50);
    book.add('j', body(1, 1, 1, 51), 21_000);
    assert.deepEqual(book.ranks('j', 0, where), []);
    assert.equal(book.ranks('j', 1, where).length, 1);
    book.add('j', body(0, 0, 1, 52), 22_000); // a late summary of the old attempt
    assert.equal(book.ranks('j', 1, where).length, 1);
    book.forget('j');
    assert.deepEqual(book.jobIds(), []);
  });
});
