import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { printable } from './printable.js';

describe('printable', () => {
  it('keeps short text and marks what it cut', () => {
    assert.equal(printable('a,b'), 'a,b');
    assert.equal(printable('x'.repeat(10), 4), 'xxxx... (10 characters)');
    assert.equal(printable('a\tb\u001b'), 'a?b?');
  });

  it('keeps tabs and line breaks when asked, for a message that quotes a line under a caret', () => {
    assert.equal(printable('at line 1:\n\n\u0001key\t: [\n^\n', 120, true), 'at line 1:\n\n?key\t: [\n^\n');
  });
});
