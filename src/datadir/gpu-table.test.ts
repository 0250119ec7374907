import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULT_GPU_TABLE, readGpuTable } from './gpu-table.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-prices-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('readGpuTable', () => {
  it('reads the shipped table', () => {
    assert.ok(readGpuTable(DEFAULT_GPU_TABLE()).gpus.length > 0);
  });

  it('says what is wrong with a file that is not a table, without echoing its contents', () => {
    const csv = join(dir, 'prices.csv');
    writeFileSync(csv, 'gpu,price\nT4,0.35\n\x1b[2J');
    assert.throws(
      () => readGpuTable(csv),
      (error: Error) => {
        assert.match(
          error.message,
          /--prices .*prices\.csv: not a JSON file\. The table is JSON in the format of data\/gpus\.json .*copy that file and edit it/,
        );
        assert.doesNotMatch(error.message, /T4|\n|\x1b/); // eslint-disable-line no-control-regex
        return true;
      },
    );
    assert.throws(() => readGpuTable(join(dir, 'missing.json')), /missing\.json: no such file$/);
    assert.throws(() => readGpuTable(dir), /a directory, not a file$/);
    const partial = join(dir, 'partial.json');
    writeFileSync(partial, '{"currency": "USD", "gpus": []}');
    assert.throws(() => readGpuTable(partial), /partial\.json: date: .*\(see data\/gpus\.json for the format\)/);
  });
});
