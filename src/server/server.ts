/**
 * Composition root of the control-plane server: data directory, store, secrets, backend,
 * policy, controller and the HTTP listener. Used by `goodput up` and `goodput run`.
 */
import type { PortRange } from '../backends/contract-env.js';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Backend, DeviceInfo } from '../backends/backend.js';
import { LocalBackend } from '../backends/local/local-backend.js';
import { setprivPath } from '../backends/local/run-as.js';
import { slurmBackend, type SlurmSettings } from '../backends/slurm/compose.js';
import { isAlive } from '../backends/local/process-info.js';
import { Controller } from '../control/controller.js';
import { hashToken, newSecret, newToken } from '../control/tokens.js';
import { GoodputError } from '../core/errors.js';
import type { Policy } from '../policy/policy.js';
import { PolicyThread } from '../control/policy-thread/policy-thread.js';
import { choosePolicy, makePolicy, type PolicyThreadMode } from './server-policy.js';
import { loadPolicyMemo, PolicyMemoSaver } from './policy-memo.js';
import { SharesFile } from '../multiuser/shares-file.js';
import { diskFullError, diskFullNote, freeBytes, isDiskFull } from '../datadir/disk-space.js';
import { openCheckedStore } from '../datadir/open-store.js';
import { keepReserve, RESERVE_BYTES } from '../datadir/reserve.js';
import { sweepRetention, type RetentionOptions } from '../datadir/retention.js';
import { sweepEndedJobs } from '../datadir/job-retention.js';
import { systemClock } from '../util/clock.js';
import { Turns } from '../util/turns.js';
import { listenPort, readReplicaUrl, reportedHost, writeReplicaUrl } from '../datadir/replica-url.js';
import { reportLogDrops } from '../datadir/log-drops.js';
import { secureDataDir } from '../datadir/secure.js';
import { serverLockHolder } from '../datadir/server-lock.js';
import { ownerAccount } from '../multiuser/accounts.js';
import type { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { UserJobLimits } from '../store/store.js';
import { createApp } from '../api/app.js';

/** Retention unless told otherwise: logs capped at 100 MiB per replica, checkpoints kept 7 days after the job ended. */
export const DEFAULT_RETENTION: RetentionOptions = {
  log_limit_bytes: 100 << 20,
  checkpoint_retention_ms: 7 * 86_400_000,
};

/** How often retention runs. */
const RETENTION_EVERY_MS = 30_000;
/** A retention pass gives way to requests after this long (util/turns.ts; the controller's budget). */
const SWEEP_TURN_MS = systemClock.turn_budget_ms!;

/** The policy `goodput up` and `goodput run` use unless told otherwise. */
export const DEFAULT_POLICY = 'goodput';

/** Version reported by /v1/health and the OpenAPI document. */
export const SERVER_VERSION = '0.1.0';

export interface ServerOptions {
  data_dir: string;
  host: string;
  /** 0 = any free port. */
  port: number;
  devices: readonly DeviceInfo[];
  /** Run replicas through Slurm instead of on this machine (`devices` is then ignored). */
  slurm?: SlurmSettings;
  /**
   * A backend built by the caller instead of the local or Slurm one (`devices` and `slurm` are then
   * ignored): bench:scale serves a FakeBackend of 16,384 devices with the real store, API and loop.
   */
  backend?: Backend;
  policy: string;
  /** NAME=VALUE overrides of the policy's knobs (`--policy-param`), validated at start. */
  policy_params?: readonly string[];
  /** Where the policy decides (`--policy-thread`; server-policy.ts): default auto, by cluster size. */
  policy_thread?: PolicyThreadMode;
  /** Shares file (`--shares`): teams, weights, quotas; re-read when it changes (issue 48). */
  shares_file?: string;
  interval_s: number;
  grace_s: number;
  /** See ControllerOptions.port_range. */
  port_range?: PortRange;
  restart_backoff_s?: number;
  /** See ControllerOptions.hung_timeout_s. */
  hung_timeout_s?: number;
  /** Multi-user mode: jobs run as their owner's Unix account (needs root). */
  run_as_owner?: boolean;
  /** Log cap and checkpoint retention (datadir/retention.ts); default: DEFAULT_RETENTION. */
  retention?: RetentionOptions;
  /** Ended jobs are removed this long after they ended (datadir/job-retention.ts); default: kept. */
  job_retention_ms?: number;
  /** See ControllerOptions.user_limits (`--max-active-jobs-per-user`, `--max-queued-jobs-per-user`). */
  user_limits?: UserJobLimits;
  /**
   * Single-user mode on a non-loopback --host: accepted only with this (every job can read the
   * admin token and secret, and the API is then reachable from other machines).
   */
  single_user_network?: boolean;
  /** See ControllerOptions.shared_profiles (`--shared-profiles`). */
  shared_profiles?: boolean;
  /** Serve from a store that lost acknowledged work (see datadir/open-store.ts). */
  accept_store_loss?: boolean;
  log: (line: string) => void;
}

/** A running server. `close` stops it; replicas keep running (they are re-adopted at restart). */
export interface RunningServer {
  url: string;
  controller: Controller;
  store: SqliteStore;
  policy: string;
  close(): Promise<void>;
}

/** Paths of the files in a data directory. */
export function dataFiles(data_dir: string) {
  return {
    db: join(data_dir, 'goodput.sqlite'),
    secret: join(data_dir, 'secret'),
    adminToken: join(data_dir, 'admin-token'),
    server: join(data_dir, 'server.json'),
    lock: join(data_dir, 'server.pid'),
    replicaUrl: join(data_dir, 'replica-url'),
  };
}

/** Reads a 0600 file, creating it with `make()` on first use. */
function privateFile(path: string, make: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = make();
  writeFileSync(path, value + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return value;
}

/**
 * Multi-user mode needs root (to start replicas as other users); a root server without it runs
 * every job as root. Either way the start says which mode it is in.
 */
function checkUserMode(multi_user: boolean, log: (line: string) => void): void {
  const uid = process.getuid?.();
  if (multi_user) {
    if (uid !== 0)
      throw new GoodputError(
        'E_USAGE',
        "--run-as-owner needs the server to run as root (it starts each job as its owner's Unix account)",
        2,
      );
    if (!setprivPath()) throw new GoodputError('E_USAGE', '--run-as-owner needs setpriv (util-linux)', 2);
    log("multi-user mode: each job runs as its owner's Unix account; the data directory's secrets are closed to jobs");
  } else {
    log(
      `single-user mode: every job runs as the server's own Unix account (uid ${uid ?? '?'}) and ` +
        `can read the data directory, tokens included; use --run-as-owner (as root) to separate ` +
        `users`,
    );
  }
}

/** Whether `host` is a loopback address (the API is then reachable from this machine only). */
export function isLoopback(host: string): boolean {
  return /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/.test(host);
}

/**
 * Secure by default: a single-user server (every job runs as its account and can read the data
 * directory's `admin-token` and `secret`) listens on loopback only, unless its admin accepts that
 * any job can act as admin (`--single-user-network`).
 */
function checkExposure(o: ServerOptions): void {
  if (isLoopback(o.host) || o.run_as_owner === true) return;
  if (o.single_user_network !== true) {
    throw new GoodputError(
      'E_USAGE',
      `--host ${o.host} makes the API reachable from other machines, but in single-user mode ` +
        `every job runs as the server's own account and can read the admin token and secret in ` +
        `${o.data_dir}; start with --run-as-owner (as root: jobs run as their owners' accounts and ` +
        `cannot read them), or pass --single-user-network to accept that any job can act as admin`,
      2,
    );
  }
  o.log(
    `warning: single-user mode on --host ${o.host}: the API is reachable from other machines ` +
      `and every job can read the admin token and secret in ${o.data_dir} (--single-user-network)`,
  );
}

/** Keeps exactly one admin token valid: the one in `admin-token` (deleting the file rotates it). */
async function rotateAdminToken(store: SqliteStore, hash: string): Promise<void> {
  const now = Date.now();
  await store.putToken({ hash, user: 'admin', admin: true, created_at_ms: now });
  for (const t of await store.listTokens('admin')) if (t.admin && t.hash !== hash) await store.revokeToken(t.hash, now);
}

async function countLiveReplicas(store: SqliteStore): Promise<number> {
  return (await store.listLiveReplicas()).filter((r) => isAlive(r.pid, r.proc_start)).length;
}

/**
 * Throws E_RUNNING when a live server other than this process owns `data_dir` (its lock file
 * names a running pid); returns quietly otherwise, also for a stale lock left by a killed server.
 */
export function refuseIfRunning(data_dir: string): void {
  const pid = serverLockHolder(dataFiles(data_dir).lock);
  if (pid !== undefined)
    throw new GoodputError(
      'E_RUNNING',
      `a goodput server (pid ${pid}) already uses ${data_dir}; stop it first or pass another --data-dir`,
    );
}

/**
 * Starts the server; refuses (E_RUNNING) when another live server owns the data directory, and
 * (E_DISK_FULL, saying what to free) when the data directory's disk has no room to start.
 */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  try {
    return await start(o);
  } catch (error) {
    if (isDiskFull(error) && !(error instanceof GoodputError && error.code === 'E_DISK_FULL'))
      throw diskFullError(o.data_dir, error);
    throw error;
  }
}

async function start(o: ServerOptions): Promise<RunningServer> {
  const choice = choosePolicy(o.policy, o.policy_params);
  // Read before anything starts: a malformed shares file refuses the start (E_SHARES, line and fix).
  const shares = o.shares_file !== undefined ? new SharesFile(o.shares_file, o.log) : undefined;
  const multi_user = o.run_as_owner === true;
  checkUserMode(multi_user, o.log);
  checkExposure(o);
  for (const line of secureDataDir(o.data_dir, multi_user)) o.log(line);
  const files = dataFiles(o.data_dir);
  refuseIfRunning(o.data_dir);
  writeFileSync(files.lock, `${process.pid}\n`, { mode: 0o600 });
  const secret = privateFile(files.secret, newSecret);
  let store: SqliteStore;
  try {
    store = await openCheckedStore(files.db, { accept_store_loss: o.accept_store_loss === true, log: o.log });
  } catch (error) {
    rmSync(files.lock, { force: true });
    throw error;
  }
  const adminToken = privateFile(files.adminToken, () => newToken('gpa'));
  await rotateAdminToken(store, hashToken(adminToken));
  let controller: Controller | undefined;
  let server: ServerType | undefined;
  let policy: Policy | PolicyThread | undefined;
  try {
    // The local backend caps each log as it is written (backends/local/log-writer.ts); the sweep below caps the others.
    const backend: Backend = o.backend
      ? o.backend
      : o.slurm
        ? await slurmBackend(o.slurm, o.data_dir, o.log)
        : new LocalBackend({ devices: o.devices, log_limit_bytes: (o.retention ?? DEFAULT_RETENTION).log_limit_bytes });
    const devices = backend.nodes().reduce((n, node) => n + node.devices.length, 0);
    const made = await makePolicy(choice, devices, o.policy_thread, await loadPolicyMemo(store, o.log));
    policy = made.policy;
    if (policy instanceof PolicyThread) o.log(`policy ${policy.name} decides in a worker thread (${devices} devices)`);
    const apiUrl = { value: '' };
    controller = new Controller({
      store,
      backend,
      policy,
      secret,
      data_dir: o.data_dir,
      api_url: '',
      interval_s: o.interval_s,
      grace_s: o.grace_s,
      log: o.log,
      ...(o.restart_backoff_s !== undefined ? { restart_backoff_s: o.restart_backoff_s } : {}),
      ...(o.hung_timeout_s !== undefined ? { hung_timeout_s: o.hung_timeout_s } : {}),
      ...(o.port_range ? { port_range: o.port_range } : {}),
      ...(multi_user ? { run_as: (owner: string) => ownerAccount(store, owner) } : {}),
      ...(o.shared_profiles === true ? { shared_profiles: true } : {}),
      ...(shares ? { shares: () => shares.current() } : {}),
      ...(o.user_limits ? { user_limits: o.user_limits } : {}),
    });
    const app = createApp({
      store,
      controller,
      secret,
      version: SERVER_VERSION,
      run_as_owner: multi_user,
      ...(multi_user && backend.checkOwner ? { check_owner: backend.checkOwner.bind(backend) } : {}),
      disk_full: () => diskFullNote(o.data_dir),
    });
    // Replicas on other nodes (Slurm) reach a server listening everywhere by its host name.
    const reported = reportedHost(o.host, o.slurm !== undefined);
    const port = listenPort(o.port, reported, readReplicaUrl(files.replicaUrl), await countLiveReplicas(store));
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: o.host, port }, () => resolve(s));
      s.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new GoodputError(
            'E_LISTEN',
            error.code === 'EADDRINUSE' ? `port ${port} on ${o.host} is in use; pass another --port` : error.message,
          ),
        ),
      );
    });
    const bound = server.address() as AddressInfo;
    apiUrl.value = `http://${reported}:${bound.port}`;
    const reach = isLoopback(bound.address)
      ? ' (loopback only)'
      : bound.address === '0.0.0.0' || bound.address === '::'
        ? ' (every network interface)'
        : '';
    o.log(
      `listening on ${bound.address.includes(':') ? `[${bound.address}]` : bound.address}:` +
        `${bound.port}` +
        `${reach}` +
        `; replicas report to ${apiUrl.value}`,
    );
    writeReplicaUrl(files.replicaUrl, apiUrl.value);
    controller.setApiUrl(apiUrl.value);
    await controller.start();
    // Atomic (write + rename): the CLI and tests poll this file while the server starts.
    writeFileSync(
      files.server + '.tmp',
      JSON.stringify({ url: apiUrl.value, pid: process.pid, policy: policy.name }) + '\n',
      { mode: 0o600 },
    );
    renameSync(files.server + '.tmp', files.server);
    const running = server;
    const ctl = controller;
    const chosen = policy;
    const memoSaver = new PolicyMemoSaver(store, made.saveMemo, o.log, () => freeBytes(o.data_dir)).start();
    const retention = o.retention ?? DEFAULT_RETENTION;
    const sweep = () =>
      void sweepRetention(join(o.data_dir, 'jobs'), store, retention, Date.now(), new Turns(SWEEP_TURN_MS))
        .then(
          (d) => {
            if (d.logs_trimmed + d.checkpoints_removed > 0)
              o.log(
                `retention: ${d.logs_trimmed} log(s) cut to their newest part, ${d.checkpoints_removed} ended job(s)' checkpoints removed`,
              );
          },
          (error: unknown) => o.log(`retention: ${(error as Error).message}`),
        )
        .then(() => reportLogDrops(join(o.data_dir, 'jobs'), store, Date.now(), new Turns(SWEEP_TURN_MS)))
        .catch(() => {});
    const retentionTimer = setInterval(sweep, RETENTION_EVERY_MS).unref();
    sweep();
    const job_retention_ms = o.job_retention_ms ?? Infinity;
    const sweepJobs = () =>
      void sweepEndedJobs(store, join(o.data_dir, 'jobs'), job_retention_ms, Date.now()).then(
        (n) => {
          if (n > 0)
            o.log(
              `job retention: removed ${n} job(s) that ended over ${job_retention_ms / 86_400_000} ` +
                `day(s) ago (their GPU time stays in the usage totals)`,
            );
        },
        (error: unknown) => o.log(`job retention: ${(error as Error).message}`),
      );
    const jobRetentionTimer = Number.isFinite(job_retention_ms)
      ? setInterval(sweepJobs, RETENTION_EVERY_MS).unref()
      : undefined;
    if (jobRetentionTimer) sweepJobs();
    // The recovery reserve (datadir/reserve.ts) is given up within a second of the disk filling.
    // Taking the reserve is news only after the disk was full: a new data directory takes it at once.
    let released = false;
    const guard = () => {
      const did = keepReserve(o.data_dir);
      if (did === 'released')
        o.log(
          `${diskFullNote(o.data_dir) ?? 'the disk is full'}: released the ${RESERVE_BYTES >> 20} ` +
            `MiB reserve so that the store can record exits and state changes`,
        );
      else if (did === 'taken' && released) o.log(`space has freed: took the ${RESERVE_BYTES >> 20} MiB reserve back`);
      if (did !== undefined) released = did === 'released';
    };
    const reserveTimer = setInterval(guard, 1000).unref();
    guard();
    return {
      url: apiUrl.value,
      controller: ctl,
      store,
      policy: chosen.name,
      async close() {
        clearInterval(retentionTimer);
        clearInterval(jobRetentionTimer);
        clearInterval(reserveTimer);
        await ctl.stop();
        await memoSaver.stop();
        if (chosen instanceof PolicyThread) await chosen.close();
        await new Promise<void>((resolve) => running.close(() => resolve()));
        await store.close();
        rmSync(files.lock, { force: true });
        rmSync(files.server, { force: true });
      },
    };
  } catch (error) {
    await controller?.stop();
    if (policy instanceof PolicyThread) await policy.close();
    server?.close();
    await store.close();
    rmSync(files.lock, { force: true });
    throw error;
  }
}
