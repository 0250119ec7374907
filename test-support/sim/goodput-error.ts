/** Assertions shared by the tests of what refuses bad input (input files, specs, parameters). */
import assert from 'node:assert/strict';
import { GoodputError } from '../../src/core/errors.js';

/** The GoodputError `fn` throws; fails the test when it throws something else or nothing. */
export function goodputErrorOf(fn: () => unknown): GoodputError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof GoodputError, String(error));
    return error;
  }
  assert.fail('expected a GoodputError, nothing was thrown');
}

/** Asserts that `fn` throws a GoodputError with `code` whose message matches `pattern`. */
export function throwsGoodputError(fn: () => unknown, code: string, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof GoodputError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  });
}
