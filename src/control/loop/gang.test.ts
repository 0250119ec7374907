import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jobRecordFixture } from '../../store/job-fixture.js';
import { gangWaits, isGang } from './gang.js';
import { sdkOf, specToStore } from '../../admission/admit.js';
import { toPolicyJob } from './snapshot.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-gang-'));
after(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'a'));
writeFileSync(join(dir, 'a', 'sdk.py'), 'import torch\nfrom goodput import AdaptiveDataParallel\n');
writeFileSync(join(dir, 'a', 'plain.py'), 'import torch\n# goodput is not used here\n');
const cpu = (n: number) => Array.from({ length: n }, (_, index) => ({ index, kind: 'cpu' as const, name: 'cpu' }));
const spec = (command: string[], extra: object = {}) => ({
  name: 'j',
  command,
  workdir: dir,
  env: {},
  min_replicas: 0,
  max_replicas: 2,
  max_restarts: 3,
  priority: 0,
  ...extra,
});

describe('plain scripts', () => {
  it('decides at submit whether a job uses the SDK (the spec wins)', () => {
    assert.equal(sdkOf(spec(['python3', 'a/sdk.py'])), true);
    assert.equal(sdkOf(spec(['torchrun', '--nproc_per_node', '2', 'a/plain.py'])), false);
    assert.equal(sdkOf(spec(['python3', 'a/plain.py'], { sdk: true })), true);
    assert.equal(sdkOf(spec([process.execPath, 'trainer.js'])), undefined, 'not a Python script: unknown');
    assert.equal(sdkOf(spec(['python3', 'missing.py'])), undefined, 'unreadable here: unknown');
  });

  it('runs a plain job as a gang of -n processes: min = max for the policy, never shrunk, until it reports', () => {
    const stored = specToStore(spec(['python3', 'a/plain.py']), cpu(4));
    assert.equal(stored.sdk, false);
    const job = {
      ...jobRecordFixture(),
      spec: stored,
      state: 'queued' as const,
      allocation: [],
      last_report_at_ms: null,
      checkpoint_on_stop: false,
    };
    assert.equal(isGang(job), true);
    assert.equal(toPolicyJob(job, 0).min_replicas, 2);
    assert.equal(
      toPolicyJob({ ...job, spec: { ...stored, resumable: true } }, 0).min_replicas,
      0,
      'a resumable script is elastic',
    );
    assert.equal(
      toPolicyJob({ ...job, spec: { ...stored, resumable: true } }, 0).max_profiled_replicas,
      2,
      'and may be given all of its -n without exploring',
    );
    assert.equal(toPolicyJob({ ...job, last_report_at_ms: 1 }, 0).min_replicas, 0, 'a job that reports uses the SDK');
    const waits = gangWaits([job], {}, 4, 'CPU slot(s)');
    assert.equal(waits.length, 1);
    assert.match(
      waits[0]!.reason,
      /waiting for 2 CPU slot\(s\) at once: a plain script .* gang of 2 processes .* 4 free now/,
    );
    assert.deepEqual(gangWaits([job], { [job.id]: [0, 0] }, 4, 'CPU slot(s)'), []);
  });

  it('refuses a gang larger than the cluster at once; an elastic job is accepted', () => {
    assert.throws(
      () => specToStore(spec(['python3', 'a/plain.py'], { max_replicas: 5 }), cpu(3)),
      (e: unknown) =>
        (e as { code?: string }).code === 'E_INFEASIBLE' &&
        /gang of -n 5 .* 3 CPU slot\(s\); submit it with -n 3 or less/.test((e as Error).message),
    );
    assert.equal(specToStore(spec(['python3', 'a/sdk.py'], { max_replicas: 5 }), cpu(3)).max_replicas, 5);
    assert.equal(
      specToStore(spec(['python3', 'a/plain.py'], { max_replicas: 5, resumable: true }), cpu(3)).resumable,
      true,
    );
  });
});
