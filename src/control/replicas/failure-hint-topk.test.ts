/**
 * Issue 52: NCF's evaluation crashed at 3 replicas (torch.topk over a user's 100 items split
 * across the replicas) and the failure reason did not connect it to batches or replicas. The
 * message is the one Debian's torch prints.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { noPython, pythonWith } from '../../../test-support/control/python.js';
import { failureHint } from './failure-hint.js';

const python = pythonWith(['torch']);
const run = (code: string): string => spawnSync(python!, ['-c', code], { encoding: 'utf8' }).stderr;

describe('failure hint: a per-batch topk on a short batch', { skip: python ? undefined : noPython(['torch']) }, () => {
  it('names the short batch, the replicas and what to do', () => {
    const tail = run(
      'import torch\nscores = torch.randn(34)  # 100 items split over 3 replicas\ntorch.topk(scores, 50)\n',
    );
    assert.match(tail, /RuntimeError/);
    assert.match(
      failureHint(tail) ?? '',
      /^a per-batch operation \(torch\.topk\) got fewer items than it asks for.*several replicas.*train=False.*min\(k, len\(batch\)\)/,
    );
  });
  it('false friend: another RuntimeError gets no such hint', () => {
    assert.equal(failureHint(run('import torch\ntorch.zeros(2) @ torch.zeros(3)\n')), undefined);
  });
});
