/**
 * The Slurm side of a rank's facts and stacks without Slurm (ask-facts.ts): one scancel per Slurm
 * job for the ranks marked in one loop, markers never written through a link, the wrapper's copy
 * of /proc/PID/stat read back as state and CPU time, and facts not asked again within 5 s.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { testTempDir } from '../../../test-support/control/harness.js';
import type { ReplicaRef } from '../backend.js';
import { runFileBase } from '../run-files.js';
import { FactsAsk, readFacts } from './ask-facts.js';

const root = testTempDir('goodput-ask-facts-');
mkdirSync(join(root, 'run'));
const ref = (rank: number, launch_id = '12'): ReplicaRef => ({
  job_id: 'j',
  attempt: 0,
  rank,
  node: 'gp1',
  launch_id,
  pid: 0,
  proc_start: '',
  job_dir: root,
});
const STAT = '4242 (python3 (x)) T 1 4242 4242 0 -1 4194304 100 0 0 0 230 20 0 0 20 0 3 0 1000 0 0';

describe('asking Slurm ranks for facts and stacks', () => {
  it('marks every rank of one loop and signals its Slurm job once, with SIGURG (23)', async () => {
    const calls: string[][] = [];
    const ask = new FactsAsk(async (args) => calls.push([...args]));
    for (const r of [0, 1, 2]) assert.equal(ask.stacks(ref(r)), true);
    assert.equal(calls.length, 0, 'signalled only after the loop marked every rank');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, [['--signal=23', '12']]);
    for (const r of [0, 1, 2]) assert.ok(existsSync(runFileBase(root, 0, r) + '.stacks'));
    assert.equal(ask.stacks(ref(3, '')), false, 'no Slurm job: nothing to ask');
  });

  it('never writes a marker through a link (run/ may be the job owner)', () => {
    const target = join(root, 'victim');
    writeFileSync(target, 'keep');
    symlinkSync(target, runFileBase(root, 0, 7) + '.kill');
    void new FactsAsk(async () => undefined).kill(ref(7));
    assert.equal(readFileSync(target, 'utf8'), 'keep');
  });

  it("reads the wrapper's copy of /proc/PID/stat; a link or garbage reads as nothing", () => {
    writeFileSync(runFileBase(root, 0, 4) + '.facts', STAT + '\n');
    assert.deepEqual(readFacts(ref(4)), { state: 'T (stopped)', cpu_s: 2.5 });
    symlinkSync(runFileBase(root, 0, 4) + '.facts', runFileBase(root, 0, 5) + '.facts');
    assert.equal(readFacts(ref(5)), undefined);
    writeFileSync(runFileBase(root, 0, 6) + '.facts', 'not a stat line');
    assert.equal(readFacts(ref(6)), undefined);
    assert.equal(readFacts(ref(9)), undefined);
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(runFileBase(root, 0, 4) + '.facts', old, old);
    assert.equal(readFacts(ref(4)), undefined, 'an answer from before the last ask');
  });

  it('asks for facts at most once per 5 s per Slurm job', async () => {
    const calls: string[][] = [];
    const ask = new FactsAsk(async (args) => {
      calls.push([...args]);
      writeFileSync(runFileBase(root, 0, 8) + '.facts', STAT); // the wrapper's answer
    });
    await ask.facts([ref(8, '13')]);
    await ask.facts([ref(8, '13')]);
    assert.deepEqual(calls, [['--signal=23', '13']]);
  });
});
