import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitPerfParams } from '../goodput/fit.js';
import type { PerfParams, ProfilePoint } from '../goodput/types.js';
import { fitAndCorrect } from '../model/job-fit.js';
import { memoizedFit, memoizedFitAndCorrect } from './fit-memo.js';

const point = (num_nodes: number, num_replicas: number, local_bsz: number, t: number): ProfilePoint => ({
  num_nodes,
  num_replicas,
  local_bsz,
  accum_step_time_s: t,
  optim_step_time_s: t * 1.3,
});

describe('memoizedFit', () => {
  it('fits each exact point set once and returns what the fit returns, as a copy', () => {
    let fits = 0;
    const fit = memoizedFit((points) => {
      fits++;
      return fitPerfParams(points);
    });
    const a = [point(1, 1, 64, 0.1), point(1, 4, 64, 0.12), point(2, 8, 128, 0.3)];
    const first = fit(a);
    assert.deepEqual(first, fitPerfParams(a));
    first.alpha_c = -1; // a caller that changes its copy changes nothing kept
    const again = fit(a.map((p) => ({ ...p })));
    assert.equal(fits, 1, 'equal points (other objects) are a hit');
    assert.deepEqual(again, fitPerfParams(a));
  });

  it('refits when any value or the order differs (a sum rounds by its order)', () => {
    const seen: (readonly ProfilePoint[])[] = [];
    const fit = memoizedFit((points) => {
      seen.push(points);
      return fitPerfParams(points);
    });
    const a = [point(1, 1, 64, 0.1), point(1, 4, 64, 0.12)];
    fit(a);
    fit([point(1, 1, 64, 0.1), point(1, 4, 64, 0.12000000000000001)]);
    fit([a[1]!, a[0]!]);
    fit([...a, point(1, 2, 64, 0.11)]);
    assert.equal(seen.length, 4);
  });

  it('keeps at most 65,536 point sets, dropping the least recently used', () => {
    const calls = new Map<number, number>();
    const fit = memoizedFit((points) => {
      const t = points[0]!.accum_step_time_s;
      calls.set(t, (calls.get(t) ?? 0) + 1);
      return { alpha_c: t } as PerfParams;
    });
    for (let k = 0; k < 65_536; k++) fit([point(1, 1, 64, k)]);
    fit([point(1, 1, 64, 0)]); // used again: now the most recent
    fit([point(1, 1, 64, 65_536)]); // one more: drops the least recent (1, not 0)
    fit([point(1, 1, 64, 0)]);
    fit([point(1, 1, 64, 1)]);
    assert.equal(calls.get(0), 1, 'kept: used recently');
    assert.equal(calls.get(1), 2, 'dropped, fitted again');
  });
});

describe('memoizedFitAndCorrect', () => {
  it('gives equal points (other objects) the very same fit and correction, which fitAndCorrect gives', () => {
    let fits = 0;
    const fit = memoizedFitAndCorrect((points) => {
      fits++;
      return fitPerfParams(points);
    });
    const a = [point(1, 1, 64, 0.1), point(1, 4, 64, 0.12), point(2, 8, 128, 0.3)];
    const first = fit(a, true);
    assert.deepEqual(first, fitAndCorrect(a, fitPerfParams, true));
    assert.ok(first.correction !== null);
    assert.equal(
      fit(
        a.map((p) => ({ ...p })),
        true,
      ),
      first,
      'the same object: a job keeps its batch choice',
    );
    assert.equal(fits, 1);
    const plain = fit(a, false);
    assert.equal(plain.correction, null, '`corrected` is part of the key');
    assert.deepEqual(fit([a[1]!, a[0]!, a[2]!], true), fitAndCorrect([a[1]!, a[0]!, a[2]!], fitPerfParams, true));
  });
});
