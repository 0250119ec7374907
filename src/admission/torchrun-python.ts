/**
 * The CLI's side of torch-launcher.ts: finds the Python a `torchrun` command would run its
 * workers with (the job's venv or conda prefix's torchrun or python, else the torchrun on this
 * shell's PATH) and turns a rejected launcher command into a usage error that says what to run.
 */
import { accessSync, constants, openSync, readSync, closeSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { usageError } from '../core/errors.js';
import { shebangInterpreter, unwrapTorchLauncher } from './torch-launcher.js';

/** A launcher command rewritten to one rank's command. */
export interface UnwrappedCommand {
  command: string[];
  /** The rank count the launcher asked for, when fixed. */
  ranks: number | undefined;
  max_restarts: number | undefined;
  /** What the user is told on stderr (without the rank count, which is the caller's to use). */
  note: string;
}

function firstLine(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(512);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
  } finally {
    closeSync(fd);
  }
}

/** The interpreter of the first executable `torchrun` in `dirs`, or undefined. */
function torchrunPython(dirs: readonly string[]): string | undefined {
  const path = dirs.map((dir) => join(dir, 'torchrun')).find((p) => executable(p));
  if (path === undefined) return undefined;
  try {
    return shebangInterpreter(firstLine(path));
  } catch {
    return undefined; // executable but unreadable: no interpreter to name
  }
}

/**
 * The Python of a bare `torchrun` in the job's environment: the prefix's own torchrun, else the
 * prefix's python (a venv made with --system-site-packages has no torchrun of its own, and the
 * user who names the venv means its interpreter), else the torchrun on PATH.
 */
function environmentPython(prefix: string | undefined): string | undefined {
  if (prefix !== undefined) {
    const bin = join(prefix, 'bin');
    const own = torchrunPython([bin]);
    if (own !== undefined) return own;
    const python = ['python3', 'python'].map((name) => join(bin, name)).find((path) => executable(path));
    if (python !== undefined) return python;
  }
  return torchrunPython((process.env.PATH ?? '').split(delimiter).filter((d) => d !== ''));
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `command` as one rank runs it when it starts through torchrun, else undefined. `prefix` is the
 * job's venv or conda prefix (its bin/ comes first on the job's PATH). Throws E_USAGE with the
 * reason and the direct form when the launcher command cannot be rewritten.
 */
export function unwrapLauncherCommand(
  cmd: string,
  command: readonly string[],
  prefix: string | undefined,
): UnwrappedCommand | undefined {
  const first = command[0] ?? '';
  const python = first.includes('/')
    ? torchrunPython([first.slice(0, first.lastIndexOf('/')) || '/'])
    : environmentPython(prefix);
  const result = unwrapTorchLauncher(command, python);
  if (result.kind === 'plain') return undefined;
  if (result.kind === 'rejected') {
    throw usageError(
      `${cmd}: ${result.reason}. Goodput starts one process per rank itself, as torchrun does ` +
        `(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set): give the script's own ` +
        `command with -n for the ranks, e.g. \`goodput ${cmd} -n 2 -- PYTHON train.py\` (PYTHON: ` +
        `the interpreter that has torch)`,
    );
  }
  return {
    command: result.command,
    ranks: result.ranks,
    max_restarts: result.max_restarts,
    note:
      `goodput: ${cmd}: goodput starts the ranks itself, as ${result.launcher} would: each rank ` +
      `runs \`${result.command.join(' ')}\` with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and ` +
      `MASTER_PORT set (${result.launcher}'s rendezvous and log options do not apply)`,
  };
}
