import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closestMatch } from './suggest.js';

describe('closestMatch', () => {
  it('suggests typos and prefixes, nothing for distant or one-letter input', () => {
    assert.equal(closestMatch('sumbit', ['up', 'submit', 'show']), 'submit');
    assert.equal(closestMatch('--max-replica', ['--max-replicas', '--max-restarts']), '--max-replicas');
    assert.equal(closestMatch('--inter', ['--interval-s', '--policy']), '--interval-s');
    assert.equal(closestMatch('--frobnicate', ['--json', '--data-dir']), undefined);
    assert.equal(closestMatch('-x', ['-J', '-n', '-e']), undefined);
  });
});
