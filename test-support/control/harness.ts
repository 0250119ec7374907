/**
 * Helpers for end-to-end tests: a real `goodput up` process on a free loopback port with a temp
 * data directory, the compiled CLI, and cleanup that kills every process group the test made.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { readWrapperPids } from '../../src/backends/local/wrapper.js';
import { procGroup } from '../../src/backends/local/process-info.js';
import { GoodputClient } from '../../src/client/client.js';
import { packagePath } from '../../src/util/package-root.js';

/** The compiled CLI entry point. */
export const CLI = packagePath('dist', 'src', 'cli', 'main.js');
/** The compiled synthetic trainer. */
export const TRAINER = packagePath('dist', 'test-support', 'control', 'synthetic-trainer.js');

/** A job of 20 one-second sleeps that knows nothing of goodput: a plain script that never reports. */
export const PLAIN_20S: readonly string[] = ['sh', '-c', 'i=0; while [ $i -lt 20 ]; do i=$((i+1)); sleep 1; done'];

export interface ServerProcess {
  pid: number;
  url: string;
  data_dir: string;
  client: GoodputClient;
  child: ChildProcess;
}

/**
 * The synthetic trainer's command line: `samples` samples, its recorded step times scaled by
 * `time_scale` (1: the trace's pace), then `extra` flags.
 */
export function trainerCommand(samples: number, time_scale = 0.5, ...extra: string[]): string[] {
  return [process.execPath, TRAINER, '--samples', String(samples), '--time-scale', String(time_scale), ...extra];
}

/** A fresh temp data directory. */
export function tempDataDir(prefix = 'goodput-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A fresh temp directory named `prefix...`, removed by a node:test `after` registered where this
 * is called (top level: after the file; in a describe block: after the block).
 */
export function testTempDir(prefix: string): string {
  const dir = tempDataDir(prefix);
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `body` on a fresh temp directory named `prefix...`, then removes the directory whatever happened. */
export async function withTempDir<T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = tempDataDir(prefix);
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts `goodput up --data-dir DIR --port 0 ...args` in its own process group (with `env` added to this process's); resolves once it serves. */
export async function startServerProcess(
  data_dir: string,
  args: readonly string[],
  env?: Readonly<Record<string, string>>,
): Promise<ServerProcess> {
  const fd = openSync(join(data_dir, 'up.log'), 'a');
  // A test that restarts a server on its old --port would otherwise get the dashboard's fixed
  // default (7879), which a server of a test running at the same time may hold.
  const ports = ['--port', '0', '--dashboard-port', '0'];
  const child = spawn(process.execPath, [CLI, 'up', '--data-dir', data_dir, ...ports, ...args], {
    detached: true,
    stdio: ['ignore', fd, fd],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  const pid = child.pid!;
  const file = join(data_dir, 'server.json');
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) break;
    try {
      const info = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number };
      if (info.pid === pid) {
        reportUnexpectedExit(child, join(data_dir, 'up.log'));
        const token = readFileSync(join(data_dir, 'admin-token'), 'utf8').trim();
        return { pid, url: info.url, data_dir, client: new GoodputClient(info.url, token), child };
      }
    } catch {
      // not there yet (or from the previous server)
    }
    await sleep(50);
  }
  killGroup(pid);
  throw new Error(`goodput up did not start:\n${readFileSync(join(data_dir, 'up.log'), 'utf8')}`);
}

/**
 * Writes the end of the server's log to stderr if it exits on its own after it started (not by
 * SIGKILL, SIGTERM or SIGINT, nor with 0, 130 or 143): the test then only sees ECONNREFUSED, and
 * cleanup removes the log with the data directory.
 */
function reportUnexpectedExit(child: ChildProcess, log: string): void {
  child.once('exit', (code, signal) => {
    if (
      signal === 'SIGKILL' ||
      signal === 'SIGTERM' ||
      signal === 'SIGINT' ||
      code === 0 ||
      code === 130 ||
      code === 143
    )
      return;
    let tail: string;
    try {
      tail = readFileSync(log, 'utf8').split('\n').slice(-40).join('\n');
    } catch {
      tail = '(no log)';
    }
    process.stderr.write(
      `goodput up (pid ${child.pid}) exited by itself (code ${code}, signal ${signal}) while the test ran; the end of ${log}:\n${tail}\n`,
    );
  });
}

/** The servers a test file or describe block starts, with the data directories they use. */
export interface TestServers {
  /** A data directory made when the fixture was: where `start` runs a server unless told otherwise. */
  readonly data_dir: string;
  /** A further fresh data directory, removed with the others. */
  fresh(): string;
  /** `startServerProcess` on `data_dir` (default: the fixture's own), the server killed at cleanup. */
  start(
    args: readonly string[],
    options?: { data_dir?: string; env?: Readonly<Record<string, string>> },
  ): Promise<ServerProcess>;
  /** Kills every server started, and every replica group its directories name; removes the directories. */
  cleanupAll(): void;
}

/**
 * The servers and data directories of a group of tests, without a hook: the caller runs
 * `cleanupAll` when they are done ({@link testServers} registers it as `after`).
 */
export function serverSet(prefix = 'goodput-e2e-'): TestServers {
  const data_dir = tempDataDir(prefix);
  const dirs = [data_dir];
  const servers: ServerProcess[] = [];
  return {
    data_dir,
    fresh() {
      const dir = tempDataDir(prefix);
      dirs.push(dir);
      return dir;
    },
    async start(args, options = {}) {
      const server = await startServerProcess(options.data_dir ?? data_dir, args, options.env);
      servers.push(server);
      return server;
    },
    cleanupAll() {
      // Every server on every directory: a server may have been started on a directory of another.
      for (const d of dirs) cleanup(d, servers);
    },
  };
}

/**
 * {@link serverSet} with its cleanup registered as node:test `after` where it is called (top level:
 * after the file; in a describe block: after the block), so a failing test leaves no process behind.
 */
export function testServers(prefix?: string): TestServers {
  const set = serverSet(prefix);
  after(() => set.cleanupAll());
  return set;
}

/** Runs the compiled CLI; never throws on a non-zero status. */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/**
 * SIGKILLs every replica process group recorded under the data dir, then the server; removes the
 * dir. Only groups that are still this test's: a recorded pid may have ended long ago and been
 * reused (pid_max is 32768 on some machines, and threads use the same numbers), and SIGKILL to a
 * reused group could kill another test file's server while the files run in parallel.
 */
export function cleanup(data_dir: string, servers: readonly { pid: number }[] = []): void {
  // A server killed a moment ago may still have started a replica, whose wrapper then writes
  // into run/: kill again what the directory names, then remove it, a few times over.
  for (let round = 1; ; round++) {
    killListed(data_dir, servers);
    try {
      // A killed process group may still be closing files in the directory for a moment: retry.
      rmSync(data_dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      return;
    } catch (error) {
      if (round >= 5) throw error;
    }
  }
}

/** SIGKILL to the test's servers and to every replica wrapper a job's run/ directory names. */
function killListed(data_dir: string, servers: readonly { pid: number }[]): void {
  for (const s of servers) killOwnGroup(s.pid, data_dir);
  const jobs = join(data_dir, 'jobs');
  if (!existsSync(jobs)) return;
  for (const job of readdirSync(jobs)) {
    const run = join(jobs, job, 'run');
    if (!existsSync(run)) continue;
    for (const f of readdirSync(run)) {
      const pgid = f.endsWith('.pid') ? readWrapperPids(join(run, f))?.shell : undefined;
      if (pgid !== undefined) killOwnGroup(pgid, data_dir);
    }
  }
}

/**
 * SIGKILL to process group `pgid` if one of its processes names `data_dir` (any path the test made) in its command line
 * (a server's --data-dir) or environment (a replica's GOODPUT_CHECKPOINT_DIR): the group is then
 * the test's, not a reuse of the number. Without /proc (not Linux), it is killed unchecked.
 */
export function killOwnGroup(pgid: number, data_dir: string): void {
  if (!existsSync('/proc/self/stat')) return killGroup(pgid);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || procGroup(Number(entry)) !== pgid) continue;
    for (const file of ['cmdline', 'environ']) {
      try {
        if (readFileSync(`/proc/${entry}/${file}`, 'latin1').includes(data_dir)) return killGroup(pgid);
      } catch {
        // the process ended, or is not readable: look at the next
      }
    }
  }
}

/** SIGKILL to a process group (no error if gone). */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // gone already
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it returns a value other than undefined/false, or throws after `timeout_ms`. */
export async function waitFor<T>(
  what: string,
  timeout_ms: number,
  check: () => Promise<T | undefined | false>,
): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    await sleep(150);
  }
  throw new Error(
    `timed out after ${timeout_ms} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
  );
}

/** The GPUs the server's /metrics counts allocated (`goodput_gpus_allocated`); NaN when it is missing. */
export async function gpusAllocated(client: GoodputClient): Promise<number> {
  return Number(/^goodput_gpus_allocated (\d+)$/m.exec(await client.metrics())?.[1]);
}

/** A job's events, one `at kind: reason` line each: the message of an assertion about them. */
export async function eventHistory(client: GoodputClient, id: string): Promise<string> {
  return (await client.events(id)).map((e) => `${e.at} ${e.kind}: ${e.reason}`).join('\n');
}

/** Parsed `synthetic:` lines of a replica log. */
export interface TrainerLine {
  kind: 'resumed' | 'checkpointed' | 'done' | 'failing';
  step: number;
  samples: number;
  attempt: number;
}

/** The synthetic trainer's progress lines in a log. */
export function trainerLines(log: string): TrainerLine[] {
  const out: TrainerLine[] = [];
  for (const m of log.matchAll(
    /^synthetic: (resumed|checkpointed|done|failing)[^\n]*?step=(\d+)(?: samples=(\d+))?(?: attempt=(\d+))?/gm,
  )) {
    out.push({
      kind: m[1] as TrainerLine['kind'],
      step: Number(m[2]),
      samples: Number(m[3] ?? 0),
      attempt: Number(m[4] ?? -1),
    });
  }
  return out;
}
