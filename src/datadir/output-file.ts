/**
 * Output files the user names (--out, --html): their folder is made if missing and checked
 * before the work that fills them, and a failure is E_OUTPUT with the reason, not an errno stack.
 */
import { writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GoodputError } from '../core/errors.js';
import { directoryProblem, errnoReason } from '../util/directory.js';

/**
 * Creates the folder of output file `path` if missing; E_OUTPUT saying why `what` cannot be
 * written there, and `hint` (what to do), when it cannot.
 */
export function prepareOutput(path: string, what: string, hint: string): void {
  const problem = directoryProblem(dirname(path), 0o777);
  if (problem !== undefined) throw new GoodputError('E_OUTPUT', `cannot write ${what} to ${path}: ${problem}; ${hint}`);
}

/** Writes output file `path` ({@link prepareOutput} first); E_OUTPUT with the reason when it fails. */
export function writeOutputFile(path: string, data: string, what: string, hint: string): void {
  prepareOutput(path, what, hint);
  try {
    writeFileSync(path, data);
  } catch (error) {
    throw new GoodputError('E_OUTPUT', `cannot write ${what} to ${path}: ${errnoReason(error)}; ${hint}`);
  }
}
