import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readProfileFile } from './profile-file.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-profile-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('readProfileFile', () => {
  it('names a file that is not a profile and how to make one, without echoing its text', () => {
    const csv = join(dir, 'results.csv');
    writeFileSync(csv, 'replicas,throughput\n1,120\n');
    assert.throws(
      () => readProfileFile(csv),
      (error: Error) => {
        assert.match(
          error.message,
          /results\.csv: not a profile file \(not JSON\); 'goodput profile --out FILE -- \.\.\.' writes one$/,
        );
        assert.doesNotMatch(error.message, /throughput|\n/);
        return true;
      },
    );
    const other = join(dir, 'other.json');
    writeFileSync(other, '{"kind": "something else"}');
    assert.throws(() => readProfileFile(other), /other\.json: not a goodput profile file \(kind: /);
  });
});
