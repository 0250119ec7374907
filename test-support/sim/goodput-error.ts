/** Assertion shared by the input-file readers' tests. */
import assert from 'node:assert/strict';
import { GoodputError } from '../../src/core/errors.js';

/** Asserts that `fn` throws a GoodputError with `code` whose message matches `pattern`. */
export function throwsGoodputError(fn: () => unknown, code: string, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof GoodputError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  });
}
