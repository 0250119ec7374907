import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CODES, GoodputError, isErrorCode, toErrorCode } from './errors.js';

describe('error codes', () => {
  it('are listed once each, all E_ and upper case', () => {
    assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
    for (const code of ERROR_CODES) assert.match(code, /^E_[A-Z_]+$/);
  });

  it('a code read from the wire is kept when known, else the fallback', () => {
    assert.equal(isErrorCode('E_NOT_FOUND'), true);
    assert.equal(isErrorCode('E_NOPE'), false);
    assert.equal(toErrorCode('E_CONFLICT', 'E_HTTP'), 'E_CONFLICT');
    assert.equal(toErrorCode('E_NOPE', 'E_HTTP'), 'E_HTTP');
    assert.equal(new GoodputError(toErrorCode('E_SPEC', 'E_INTERNAL'), 'bad').code, 'E_SPEC');
  });
});
