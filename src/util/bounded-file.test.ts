import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readBoundedText, sizeWords } from './bounded-file.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-bounded-'));

describe('readBoundedText', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file within the bound; refuses a larger one by its size', () => {
    const small = join(dir, 'small');
    writeFileSync(small, 'é'.repeat(512));
    assert.deepEqual(readBoundedText(small, 1024), { text: 'é'.repeat(512) });
    const large = join(dir, 'large');
    writeFileSync(large, Buffer.alloc(3 * 2 ** 20));
    assert.deepEqual(readBoundedText(large, 1024), { refused: 'too-large', size: '3.0 MiB' });
  });

  it('reads an endless device only one byte past the bound', () => {
    assert.deepEqual(readBoundedText('/dev/zero', 1024), { refused: 'too-large', size: 'over 1 KiB' });
  });

  it('says why a missing file, or a device where only a regular file will do, is not read', () => {
    const missing = readBoundedText(join(dir, 'missing'), 1024);
    assert.ok('refused' in missing && missing.refused === 'unreadable' && /ENOENT/.test(missing.message));
    assert.deepEqual(readBoundedText('/dev/null', 1024, true), { refused: 'not-regular' });
    assert.deepEqual(readBoundedText('/dev/null', 1024), { text: '' });
  });

  it('says sizes in whole units', () => {
    assert.deepEqual([sizeWords(2 ** 20), sizeWords(64 * 1024), sizeWords(1000)], ['1 MiB', '64 KiB', '1000 bytes']);
  });
});
