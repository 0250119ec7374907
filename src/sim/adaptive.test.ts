import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { OptimusPolicy } from '../policy/optimus.js';
import type { IntervalRecord } from './simulator.js';
import { simulate } from './simulator.js';
import { loadWorkload } from './workload.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-adaptive-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('adaptive (Pollux) job mode', () => {
  it('fits models online, adapts batch sizes and keeps ncf at 32768 on one GPU', () => {
    const file = join(dir, 'tiny.csv');
    writeFileSync(
      file,
      'name,time,application,num_replicas,batch_size\ncifar10-0,0,cifar10,1,128\nncf-1,100,ncf,1,32768\n',
    );
    const records: IntervalRecord[] = [];
    const seenModels: boolean[] = [];
    // Any policy drives the adaptive mode; Optimus is deterministic and reads job models.
    const optimus = new OptimusPolicy();
    const result = simulate(
      loadWorkload(file),
      'pollux',
      {
        name: 'optimus-in-pollux-mode',
        decide: (s) => {
          seenModels.push(s.jobs.some((j) => j.model !== undefined));
          for (const j of s.jobs) {
            if (j.id.startsWith('ncf')) assert.deepEqual([j.max_replicas, j.fixed_batch_size], [1, 32768]);
            else assert.deepEqual([j.max_replicas, j.fixed_batch_size], [64, undefined]);
          }
          return optimus.decide(s);
        },
      },
      { onInterval: (r) => records.push(r) },
    );
    assert.equal(result.mode, 'adaptive');
    assert.equal(seenModels[0], false, 'no model before the first profile');
    assert.ok(seenModels.slice(1).every(Boolean), 'models once profiled');
    const cifar = records.flatMap((r) => r.jobs.filter((j) => j.name === 'cifar10-0' && j.placement.length > 0));
    const first = cifar[0]!;
    assert.equal(
      first.batch_size,
      Math.max(128, 32 * first.placement.reduce((s, g) => s + g, 0)),
      'unfitted rule on the first allocation',
    );
    assert.ok(new Set(cifar.map((j) => j.batch_size)).size > 1, 'the batch size adapts over time');
    for (const j of records.flatMap((r) => r.jobs.filter((x) => x.name === 'ncf-1' && x.placement.length > 0))) {
      assert.deepEqual([j.batch_size, j.accum_steps, j.placement], [32768, 1, [1]]);
    }
    assert.ok(result.jobs.every((j) => j.jct_s > 0));
  });
});
