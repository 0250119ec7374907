/**
 * Errors that reach a user: each has a stable `code` (for scripts and docs) and a message that
 * says what to do. Reserved for bad input and infrastructure faults; a policy's refusal is a
 * value (see policy/policy.ts `Rejection`), not an exception.
 */
export class GoodputError extends Error {
  readonly code: string;
  /** Process exit status the CLI uses for this error (2 = usage, 1 = everything else). */
  readonly exitCode: number;

  constructor(code: string, message: string, exitCode = 1) {
    super(message);
    this.name = 'GoodputError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** A bad command line: unknown flag, missing argument, value out of range. Exit status 2. */
export function usageError(message: string): GoodputError {
  return new GoodputError('E_USAGE', message, 2);
}

/** Bad content in an input file; the message names the file and, when known, the line. */
export function inputError(file: string, line: number | undefined, message: string): GoodputError {
  const where = line === undefined ? file : `${file}:${line}`;
  return new GoodputError('E_INPUT', `${where}: ${message}`);
}
