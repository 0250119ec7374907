import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tiresiasPolicy } from '../policy/tiresias.js';
import { packagePath } from '../util/package-root.js';
import { simulate } from './simulator.js';
import { throwsGoodputError } from '../../test-support/sim/goodput-error.js';
import { jitterSubmissions, loadWorkload } from './workload.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-workload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function csv(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('workload loader', () => {
  it('loads the shipped workloads in file order', () => {
    const w = loadWorkload(packagePath('data', 'pollux', 'workloads', 'workload-1.csv'));
    assert.equal(w.jobs.length, 160);
    assert.deepEqual(
      w.jobs.slice(0, 3).map((j) => [j.name, j.submit_s, j.application.name, j.num_replicas, j.batch_size, j.line]),
      [
        ['cifar10-0', 107, 'cifar10', 6, 2048, 2],
        ['deepspeech2-1', 110, 'deepspeech2', 6, 320, 3],
        ['ncf-2', 135, 'ncf', 1, 32768, 4],
      ],
    );
  });

  it('names file and line for a missing column, a malformed number, an unknown application', () => {
    const missing = csv('missing.csv', 'name,time,application,num_replicas\na,1,cifar10,1\n');
    throwsGoodputError(() => loadWorkload(missing), 'E_INPUT', /missing\.csv:1: missing column 'batch_size'/);
    const malformed = csv(
      'malformed.csv',
      'name,time,application,num_replicas,batch_size\na,1,cifar10,1,128\nb,soon,cifar10,1,128\n',
    );
    throwsGoodputError(
      () => loadWorkload(malformed),
      'E_INPUT',
      /malformed\.csv:3: column 'time': 'soon' is not a number/,
    );
    const unknown = csv('unknown.csv', 'name,time,application,num_replicas,batch_size\na,1,gpt5,1,128\n');
    throwsGoodputError(
      () => loadWorkload(unknown),
      'E_INPUT',
      /unknown\.csv:2: unknown application 'gpt5' \(known: bert, cifar10/,
    );
    const ragged = csv('ragged.csv', 'name,time,application,num_replicas,batch_size\na,1,cifar10,1\n');
    throwsGoodputError(() => loadWorkload(ragged), 'E_INPUT', /ragged\.csv:2: expected 5 comma-separated values/);
    const badBatch = csv('batch.csv', 'name,time,application,num_replicas,batch_size\na,1,cifar10,1,99999\n');
    throwsGoodputError(() => loadWorkload(badBatch), 'E_INPUT', /batch\.csv:2: batch_size 99999 of cifar10 is outside/);
    throwsGoodputError(
      () => loadWorkload(join(dir, 'nope.csv')),
      'E_NOT_FOUND',
      /nope\.csv: cannot read workload \(no such file\)/,
    );
  });

  it('jitters submissions deterministically within +-spread/2, never before 0', () => {
    const w = loadWorkload(packagePath('data', 'pollux', 'workloads', 'workload-1.csv'));
    assert.equal(jitterSubmissions(w, 0, 1), w);
    const a = jitterSubmissions(w, 240, 1);
    assert.deepEqual(jitterSubmissions(w, 240, 1), a);
    assert.notDeepEqual(
      jitterSubmissions(w, 240, 2).jobs.map((j) => j.submit_s),
      a.jobs.map((j) => j.submit_s),
    );
    assert.deepEqual(
      a.jobs.map((j) => j.name),
      w.jobs.map((j) => j.name),
    );
    let moved = 0;
    a.jobs.forEach((job, i) => {
      const before = w.jobs[i]!.submit_s;
      assert.ok(Number.isInteger(job.submit_s) && job.submit_s >= 0, String(job.submit_s));
      assert.ok(Math.abs(job.submit_s - before) <= 120 || job.submit_s === 0, `${before} -> ${job.submit_s}`);
      if (job.submit_s !== before) moved++;
    });
    assert.ok(moved > w.jobs.length / 2, `only ${moved} jobs moved`);
  });

  it('refuses a cluster smaller than a job gang, naming the job and its line', () => {
    const w = loadWorkload(
      csv('big.csv', 'name,time,application,num_replicas,batch_size\nsmall,1,cifar10,1,128\nbig,5,cifar10,8,2048\n'),
    );
    throwsGoodputError(
      () => simulate(w, 'tiresias', tiresiasPolicy.create({ seed: 0 }), { nodes: 1 }),
      'E_CLUSTER_TOO_SMALL',
      /big\.csv:3: job big needs 8 GPUs under tiresias but the cluster has 4/,
    );
  });

  it('simulates a tiny workload by hand-checkable rules', () => {
    // One cifar10 job alone on 1 GPU: arrives at 60 s, 30 s restart delay, then 100 epochs.
    const w = loadWorkload(csv('one.csv', 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\n'));
    const r = simulate(w, 'tiresias', tiresiasPolicy.create({ seed: 0 }));
    const job = r.jobs[0]!;
    assert.equal(job.restarts, 0);
    // (1,)@128 costs 0.103115 s per step, ~39063 steps: about 4028 s of training + 90 s.
    assert.ok(job.jct_s > 4000 && job.jct_s < 4200, String(job.jct_s));
    assert.equal(job.attained_gpu_s, job.jct_s - 60, 'GPU time = JCT minus the wait for the first round');
  });
});
