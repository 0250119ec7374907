import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateDecision } from './validate-decision.js';

describe('validateDecision', () => {
  const scope = { nodes: [{ gpus: 2 }, { gpus: 4 }], jobs: [{ id: 'a' }, { id: 'b' }] };
  const cases: { name: string; allocations: Record<string, number[]>; want: string | null }[] = [
    { name: 'a fitting decision passes', allocations: { a: [0, 0], b: [1, 1, 1, 1] }, want: null },
    { name: 'empty allocations of unknown jobs are harmless', allocations: { a: [0], z: [] }, want: null },
    {
      name: 'an unknown job is refused',
      allocations: { z: [0] },
      want: 'job z is not in the snapshot but got an allocation',
    },
    { name: 'an unknown node is refused', allocations: { a: [2] }, want: 'job a allocated to unknown node 2' },
    { name: 'a fractional node is refused', allocations: { a: [0.5] }, want: 'job a allocated to unknown node 0.5' },
    {
      name: 'over-commit is refused',
      allocations: { a: [0, 0], b: [0, 1] },
      want: 'node 0 over-committed (3 > 2 GPUs)',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(
        validateDecision(scope, c.allocations),
        c.want === null ? { ok: true } : { ok: false, reason: c.want },
      );
    });
  }
  it('a job on nodes of two GPU types is refused; untyped nodes are one type', () => {
    const typed = {
      nodes: [
        { gpus: 4, gpu_type: 'a100' },
        { gpus: 4, gpu_type: 't4' },
        { gpus: 4, gpu_type: 'a100' },
      ],
      jobs: [{ id: 'a' }],
    };
    assert.deepEqual(validateDecision(typed, { a: [0, 1] }), { ok: false, reason: 'job a spans GPU types (a100, t4)' });
    assert.deepEqual(validateDecision(typed, { a: [0, 2] }), { ok: true });
    assert.deepEqual(validateDecision(scope, { a: [0, 1] }), { ok: true });
  });
});
