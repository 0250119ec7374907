/** Small Linux process helpers (/proc), with portable fallbacks. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { GoodputError } from '../../core/errors.js';
import type { PortRange } from '../contract-env.js';

/**
 * Start time of a process (field 22 of /proc/<pid>/stat, clock ticks since boot), or '' when
 * unknown. Together with the pid it identifies a process across pid reuse.
 */
export function procStart(pid: number): string {
  const stat = procStat(pid);
  return stat ? (stat[19] ?? '') : '';
}

/** CPU seconds (user + system, at 100 clock ticks per second) the process has used, or undefined. */
export function procCpu_s(pid: number): number | undefined {
  const stat = procStat(pid);
  return stat ? (Number(stat[11]) + Number(stat[12])) / 100 : undefined;
}

const STATES: Readonly<Record<string, string>> = {
  R: 'running',
  S: 'sleeping',
  D: 'uninterruptible wait (I/O)',
  T: 'stopped',
  t: 'stopped by a tracer',
  Z: 'zombie',
};

/** State (`T (stopped)`) and CPU seconds of a process from /proc, or undefined. */
export function procFacts(pid: number): { state: string; cpu_s: number } | undefined {
  const stat = procStat(pid);
  return stat ? factsOf(stat) : undefined;
}

/**
 * State and CPU seconds from the text of a /proc/PID/stat (read on another node and copied, as
 * the Slurm task wrapper does), or undefined when it is not one.
 */
export function procFactsOf(text: string): { state: string; cpu_s: number } | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const stat = text
    .slice(close + 2)
    .trim()
    .split(' ');
  return stat.length > 12 && /^[A-Za-z]$/.test(stat[0] ?? '') ? factsOf(stat) : undefined;
}

function factsOf(stat: readonly string[]): { state: string; cpu_s: number } {
  const letter = stat[0] ?? '?';
  return { state: `${letter} (${STATES[letter] ?? 'other'})`, cpu_s: (Number(stat[11]) + Number(stat[12])) / 100 };
}

/** Fields of /proc/<pid>/stat after the command name (index 0 = state), or undefined. */
function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Process group of a process (field 5 of /proc/<pid>/stat), or undefined when unknown. */
export function procGroup(pid: number): number | undefined {
  const stat = procStat(pid);
  return stat ? Number(stat[2]) : undefined;
}

/**
 * Whether the process `pid` runs and is the one that started at `start` ('' = do not check).
 * A zombie counts as gone.
 */
export function isAlive(pid: number, start: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (!stat) return process.platform !== 'linux';
  if (stat[0] === 'Z' || stat[0] === 'X') return false;
  return start === '' || stat[19] === start;
}

/**
 * Sends `signal` to the process group `pgid`; false when there is none. Refuses pgid <= 1: -0
 * would be the caller's own group and -1 every process it may signal.
 */
export function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * A TCP port free on 127.0.0.1 right now: one the OS picks, or within `range` (tried from a random
 * start, at most 256 ports). Throws E_BACKEND_UNAVAILABLE when none of the range is free.
 */
export async function freePort(range?: PortRange): Promise<number> {
  if (!range) return listenOnce(0);
  const n = range.last - range.first + 1;
  const start = Math.floor(Math.random() * n);
  for (let k = 0; k < Math.min(n, 256); k++) {
    try {
      return await listenOnce(range.first + ((start + k) % n));
    } catch {
      // taken: try the next one
    }
  }
  throw new GoodputError(
    'E_BACKEND_UNAVAILABLE',
    `no free port for MASTER_PORT in ${range.first}-${range.last} (goodput up --port-range); retrying later`,
  );
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
