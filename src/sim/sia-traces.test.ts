import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { throwsGoodputError } from '../../test-support/sim/goodput-error.js';
import { parsePlacements, parseScalability, readSiaTraces } from './sia-traces.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-sia-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Writes `files` (name -> text) under a new trace directory's application folders; returns the directory. */
function traceDir(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('Sia trace reader', () => {
  it('reads columns by header in any order, placements as GPUs per node', () => {
    const a = parsePlacements('local_bsz,step_time,sync_time,placement\n8,0.5,0.1,44\n8,0.2,0.001,1\n', 'a.csv');
    const b = parsePlacements(
      'placement,sync_time,local_bsz,step_time,extra\n44,0.1,8,0.5,x\n1,0.001,8,0.2,y\n',
      'b.csv',
    );
    assert.deepEqual(a, b);
    assert.deepEqual(a[0], {
      placement: [4, 4],
      num_nodes: 2,
      num_replicas: 8,
      local_bsz: 8,
      step_time_s: 0.5,
      sync_time_s: 0.1,
    });
    const s = parseScalability('num_replicas,num_nodes,step_time,local_bsz,sync_time\n24,3,0.9,16,0.4\n', 's.csv');
    assert.deepEqual(s, [{ num_nodes: 3, num_replicas: 24, local_bsz: 16, step_time_s: 0.9, sync_time_s: 0.4 }]);
  });

  it('names file and line of a malformed row', () => {
    throwsGoodputError(
      () => parsePlacements('local_bsz,step_time,sync_time,placement\n8,0.5,0.1,4a\n', 'p.csv'),
      'E_INPUT',
      /p\.csv:2: column 'placement': '4a' is not a placement/,
    );
    throwsGoodputError(
      () => parsePlacements('local_bsz,step_time,sync_time,placement\n8,0.5,0.1,40\n', 'p.csv'),
      'E_INPUT',
      /p\.csv:2: .*'40'/,
    );
    throwsGoodputError(
      () => parsePlacements('local_bsz,step_time,placement\n8,0.5,4\n', 'p.csv'),
      'E_INPUT',
      /p\.csv:1: missing column 'sync_time'/,
    );
    throwsGoodputError(
      () => parsePlacements('local_bsz,step_time,sync_time,placement\n8,abc,0.1,4\n', 'p.csv'),
      'E_INPUT',
      /p\.csv:2: column 'step_time': 'abc' is not a number/,
    );
    throwsGoodputError(
      () => parsePlacements('local_bsz,step_time,sync_time,placement\n8,0,0.1,4\n', 'p.csv'),
      'E_INPUT',
      /p\.csv:2: column 'step_time': 0 is not a positive time/,
    );
    throwsGoodputError(
      () => parsePlacements('local_bsz,step_time,sync_time,placement\n8,0.5,4\n', 'p.csv'),
      'E_INPUT',
      /p\.csv:2: expected 4 comma-separated values/,
    );
    throwsGoodputError(
      () => parseScalability('local_bsz,step_time,sync_time,num_nodes,num_replicas\n8,0.5,0.1,3,2\n', 's.csv'),
      'E_INPUT',
      /s\.csv:2: column 'num_replicas': 2 is below the minimum 3/,
    );
  });

  it('reads a directory: types from file names, scalability rows that repeat placement rows counted once', () => {
    const dir = traceDir('ok', {
      'zeta/placements-t4.csv': 'placement,local_bsz,step_time,sync_time\n1,8,0.2,0.001\n2,8,0.3,0.05\n',
      'zeta/scalability-t4.csv':
        'num_nodes,num_replicas,local_bsz,step_time,sync_time\n1,2,8,0.3,0.05\n6,24,8,0.9,0.6\n',
      'zeta/placements.csv': 'placement,local_bsz,step_time,sync_time\n1,8,0.2,0.001\n',
      'zeta/validation-8.csv': 'progress,iteration,metric,grad_sqr,grad_var\n',
      'alpha/placements-a100.csv': 'local_bsz,step_time,sync_time,placement\n8,0.1,0.001,1\n',
      'notes.txt': 'not an application',
      'empty/README': 'no traces here',
    });
    const traces = readSiaTraces(dir);
    assert.deepEqual(traces.types, ['a100', 't4']);
    assert.deepEqual(
      traces.applications.map((a) => a.name),
      ['alpha', 'zeta'],
    );
    const zeta = traces.applications[1]?.byType.get('t4') ?? [];
    assert.equal(zeta.length, 3);
    assert.deepEqual(zeta[2], { num_nodes: 6, num_replicas: 24, local_bsz: 8, step_time_s: 0.9, sync_time_s: 0.6 });
  });

  it('refuses a missing directory and one without applications', () => {
    throwsGoodputError(() => readSiaTraces(join(root, 'missing')), 'E_NOT_FOUND', /no such trace directory/);
    throwsGoodputError(
      () => readSiaTraces(traceDir('none', { 'app/placements.csv': 'placement,local_bsz,step_time,sync_time\n' })),
      'E_INPUT',
      /no application found/,
    );
  });
});
