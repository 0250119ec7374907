/**
 * Pins the goodput policy's one-type decisions on seeded generated clusters (bench:policy's and
 * bench:scale's generator) over rounds fed back: the speed work of issue #49 (memos, scratch
 * buffers, fewer allocations) must leave every allocation, rejection, resize gain and the
 * diagnostics' objective where they were. 256 GPUs take the exact evaluations; 512 GPUs the
 * approximate ones of policy/goodput/scale.ts (SCALE_GPUS). A digest differs when any decision
 * does: regenerate the pins only for a change meant to change decisions, and say so.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Allocation } from '../../src/core/cluster.js';
import { createPolicy } from '../../src/policy/registry.js';
import { feedBack, generateOneType, roundSnapshot } from '../generated-cluster.js';

/** A digest of each round's decision: allocations, rejections and gains, by job id. */
async function decisionDigests(nodes: number, jobs: number, rounds: number): Promise<string[]> {
  const cluster = generateOneType(nodes, 4, jobs);
  const policy = await createPolicy('goodput', { seed: 1 });
  let allocations: Record<string, Allocation> = cluster.allocations;
  const digests: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const snapshot = roundSnapshot(cluster, round, allocations);
    const d = policy.decide(snapshot);
    const byId = <T>(r: Record<string, T>): [string, T][] =>
      Object.keys(r)
        .sort()
        .map((id) => [id, r[id]!]);
    const text = JSON.stringify([byId(d.allocations), byId(d.rejections ?? {}), byId(d.gains ?? {})]);
    const objective = d.diagnostics?.objective ?? NaN;
    digests.push(`${createHash('sha256').update(text).digest('hex').slice(0, 16)} ${objective.toFixed(6)}`);
    allocations = d.allocations;
    feedBack(cluster.jobs, allocations);
  }
  return digests;
}

describe('goodput policy decisions on generated clusters (pinned)', () => {
  it('256 GPUs, 600 jobs, 4 rounds (exact evaluations)', async () => {
    assert.deepEqual(await decisionDigests(64, 600, 4), PINS_256);
  });

  it('512 GPUs, 1,250 jobs, 3 rounds (approximate evaluations at scale)', async () => {
    assert.deepEqual(await decisionDigests(128, 1250, 3), PINS_512);
  });
});

// Digests of the decisions before the speed work of issue #49 (commit 6ecb9b0).
const PINS_256 = [
  'c552c567f7dda444 1433.845412',
  '93da73c404677924 1577.444763',
  '93da73c404677924 1577.195841',
  '93da73c404677924 1577.055996',
];
const PINS_512 = ['687a179b553d7ccb 2955.267768', 'f7beb6e05dbdac22 3265.795535', 'f7beb6e05dbdac22 3265.601505'];
