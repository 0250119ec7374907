/**
 * Every stable error code a user or a script can see (CLI stderr, `--json`, the API's
 * `{"error": {"code"}}`), in one list: docs and scripts branch on these names, so a new one is
 * added here, never spelled ad hoc.
 */
export const ERROR_CODES = [
  // Bad input: command line, files, specs, API requests.
  'E_USAGE',
  'E_INPUT',
  'E_SPEC',
  'E_BAD_REQUEST',
  'E_TOO_LARGE',
  'E_BAD_POLICY_PARAM',
  'E_UNKNOWN_POLICY',
  'E_OUTPUT',
  // A malformed shares file (goodput up/sim --shares).
  'E_SHARES',
  // Access.
  'E_UNAUTHORIZED',
  'E_FORBIDDEN',
  // State of jobs and resources.
  'E_NOT_FOUND',
  'E_AMBIGUOUS',
  'E_NO_SCRIPT',
  'E_CONFLICT',
  'E_INFEASIBLE',
  'E_NO_CAPACITY',
  'E_CLUSTER_TOO_SMALL',
  'E_DEVICES',
  'E_RUNNING',
  // A user's per-user limit of jobs (goodput up --max-active-jobs-per-user, --max-queued-jobs-per-user).
  'E_JOB_LIMIT',
  // Simulation and policies.
  'E_POLICY',
  'E_SIM_STALLED',
  // Backends and launching.
  'E_BACKEND_UNAVAILABLE',
  'E_LAUNCH',
  'E_LAUNCH_HELD',
  'E_STOP',
  'E_SLURM',
  'E_SLURM_PARTITION',
  'E_SHARED_FS',
  // Server, store and data directory.
  'E_START',
  'E_LISTEN',
  'E_PORT_CHANGED',
  'E_DATA_DIR',
  'E_STORE_DAMAGED',
  'E_STORE_UNAVAILABLE',
  'E_STORE_VERSION',
  'E_STORE_LOST',
  'E_UNAVAILABLE',
  'E_DISK_FULL',
  'E_BUSY',
  'E_EXISTS',
  // Client side of HTTP.
  'E_SERVER_DOWN',
  'E_HTTP',
  // A bug: anything not foreseen.
  'E_INTERNAL',
] as const;

/** A stable error code (ERROR_CODES). */
export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN = new Set<string>(ERROR_CODES);

/** Whether `code` is one of ERROR_CODES (codes read from another process or the wire). */
export function isErrorCode(code: string): code is ErrorCode {
  return KNOWN.has(code);
}

/** `code` when it is one of ERROR_CODES, else `fallback` (a newer server's code the client does not know). */
export function toErrorCode(code: string, fallback: ErrorCode): ErrorCode {
  return isErrorCode(code) ? code : fallback;
}

/**
 * Errors that reach a user: each has a stable `code` (for scripts and docs) and a message that
 * says what to do. Reserved for bad input and infrastructure faults; a policy's refusal is a
 * value (see policy/policy.ts `Rejection`), not an exception.
 */
export class GoodputError extends Error {
  readonly code: ErrorCode;
  /** Process exit status the CLI uses for this error (2 = usage, 1 = everything else). */
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, exitCode = 1) {
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
