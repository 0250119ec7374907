/**
 * Test support (never imported by shipped code): a real Slurm cluster on this host, one
 * slurmctld and one slurmd per emulated node, each node with fake GPUs (character devices made
 * with mknod, which is all Slurm checks), configured in a temp directory on free ports.
 * Recipe and pitfalls: shared/docs/slurm-testing.md. Needs root (mknod, SlurmUser=root).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../local/process-info.js';

const run = promisify(execFile);

/** Why Slurm tests cannot run here, or undefined when they can. */
export function slurmMissing(): string | undefined {
  const found = ['/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/bin/sbatch'].every((p) => existsSync(p));
  if (!found)
    return 'slurmctld/slurmd are not installed (apt-get install slurm-wlm; scripts/test-packages.txt lists it)';
  if (process.getuid?.() !== 0) return 'the test Slurm cluster needs root (mknod of fake GPUs, SlurmUser=root)';
  return undefined;
}

/**
 * `goodput up` flags for a server on the test cluster: the slurm backend, rounds every `interval_s`
 * (default 1 s), `grace_s` of grace (default 5 s), `policy`, then `extra`.
 */
export function slurmUpArgs(
  policy: string,
  extra: readonly string[] = [],
  { interval_s = 1, grace_s = 5 }: { interval_s?: number; grace_s?: number } = {},
): string[] {
  const timing = ['--interval-s', String(interval_s), '--grace-s', String(grace_s)];
  return ['--backend', 'slurm', ...timing, '--policy', policy, ...extra];
}

/** Shape of the emulated cluster. */
export interface SlurmClusterOptions {
  nodes?: number;
  gpus_per_node?: number;
  cpus_per_node?: number;
  /** Partition name. Default 'gpu'. */
  partition?: string;
  /**
   * GRES type of each node's GPUs, in node order (e.g. ['a100', 't4']: gp1 has 4 `gpu:a100`, gp2
   * 4 `gpu:t4`); default `fakegpu` on every node. `a100+t4` splits a node's GPUs evenly between
   * the types (`Gres=gpu:a100:2,gpu:t4:2`).
   */
  gpu_types?: readonly string[];
  /**
   * A directory this node does not share with the others: its slurmd (and every task it starts)
   * runs in a private mount namespace with an empty tmpfs over `dir`, as on a cluster whose
   * nodes do not mount the server's file system.
   */
  unshared?: { node: string; dir: string };
  /**
   * Multi-user tests: the partition takes jobs of members of these Unix groups only
   * (`AllowGroups=`; slurmctld enforces it without accounting storage, unlike `AllowAccounts=`,
   * which without slurmdbd leaves every job pending, "account not known"), and ended jobs are
   * recorded by jobcomp/filetxt, so `sacct -c` lists their user and account (there is no slurmdbd).
   */
  allow_groups?: readonly string[];
}

/** A running test cluster. */
export interface SlurmCluster {
  dir: string;
  /** Environment for every Slurm client command (SLURM_CONF). */
  env: Record<string, string>;
  nodes: string[];
  partition: string;
  /** Runs a Slurm client command against this cluster; resolves with stdout. */
  cmd(command: string, args: readonly string[]): Promise<string>;
  /** Stops slurmctld alone (an outage: jobs keep running on the nodes, client commands fail). */
  stopController(): Promise<void>;
  /** Starts slurmctld again; resolves once every node has registered with it (jobs recovered from its state). */
  startController(): Promise<void>;
  /** Resumes every node not idle (one a test drained or set down, and left so when it failed). */
  resumeNodes(): Promise<void>;
  /** Cancels every job, stops the daemons and removes the directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Environment variable through which a test runner (scripts/run-tests.mjs) lends the test files it
 * starts a pool of Slurm clusters: a directory with one `<shape>.json` ({@link PooledSlurmCluster})
 * per cluster started so far. Starting the daemons and waiting for the nodes takes seconds, and a
 * tier of Slurm tests needs a handful of shapes: each shape is started once per run, by the first
 * file that asks for it, and the runner stops them all at the end ({@link stopSlurmPool}).
 */
export const SLURM_POOL_ENV = 'GOODPUT_TEST_SLURM_POOL';

/** A pooled cluster as its `<shape>.json` describes it. */
export interface PooledSlurmCluster {
  shape: string;
  dir: string;
  nodes: string[];
  partition: string;
}

/** The options with their defaults filled in, as a string: two requests of one shape get one cluster. */
function shapeOf(options: SlurmClusterOptions): string {
  const {
    nodes = 2,
    gpus_per_node = 4,
    cpus_per_node = 8,
    partition = 'gpu',
    gpu_types,
    unshared,
    allow_groups,
  } = options;
  return JSON.stringify({
    nodes,
    gpus_per_node,
    cpus_per_node,
    partition,
    gpu_types: gpu_types ?? null,
    unshared: unshared ?? null,
    ...(allow_groups ? { allow_groups } : {}),
  });
}

const poolFile = (pool: string, shape: string) =>
  join(pool, `${createHash('sha256').update(shape).digest('hex').slice(0, 16)}.json`);

/**
 * Starts a Slurm test cluster, or lends one. With {@link SLURM_POOL_ENV} set (the runner's heavy
 * tier), a cluster of the same shape as `options` that an earlier file started is reused, or this
 * call starts one and pools it; either way `stop()` only cancels every job and brings the nodes
 * back to idle for the next file (the runner stops the daemons). Files that share a pool run one
 * at a time (the heavy tier does). Without a pool, a cluster of its own ({@link startOwnSlurmCluster}).
 */
export async function startSlurmCluster(options: SlurmClusterOptions = {}): Promise<SlurmCluster> {
  const pool = process.env[SLURM_POOL_ENV];
  if (!pool || !existsSync(pool)) return startOwnSlurmCluster(options);
  const shape = shapeOf(options);
  const file = poolFile(pool, shape);
  if (existsSync(file)) {
    const pooled = JSON.parse(readFileSync(file, 'utf8')) as PooledSlurmCluster;
    const cluster = clusterHandle(pooled.dir, pooled.nodes, pooled.partition, false);
    await cluster.untilIdle(60_000);
    return cluster;
  }
  const own = await startOwnSlurmCluster(options);
  const pooled: PooledSlurmCluster = { shape, dir: own.dir, nodes: own.nodes, partition: own.partition };
  writeFileSync(file, JSON.stringify(pooled));
  return clusterHandle(own.dir, own.nodes, own.partition, false);
}

/** Stops every cluster of the pool in `pool` and removes their directories (the runner, after its heavy tier); returns how many. */
export async function stopSlurmPool(pool: string): Promise<number> {
  const files = existsSync(pool) ? readdirSync(pool).filter((f) => f.endsWith('.json')) : [];
  for (const f of files) {
    const pooled = JSON.parse(readFileSync(join(pool, f), 'utf8')) as PooledSlurmCluster;
    await clusterHandle(pooled.dir, pooled.nodes, pooled.partition, true).stop();
    rmSync(join(pool, f), { force: true });
  }
  return files.length;
}

/**
 * Starts slurmctld and `nodes` slurmd instances (names gp1, gp2, ...), `gpus_per_node` fake
 * GPUs of type `fakegpu` (or `gpu_types[i]`) each, and resolves once `sinfo` shows every node idle (60 s at most).
 */
export async function startOwnSlurmCluster(options: SlurmClusterOptions = {}): Promise<SlurmCluster> {
  const count = options.nodes ?? 2;
  const gpus = options.gpus_per_node ?? 4;
  const cpus = options.cpus_per_node ?? 8;
  const partition = options.partition ?? 'gpu';
  const typesOf = (i: number) => (options.gpu_types?.[i] ?? 'fakegpu').split('+');
  const dir = mkdtempSync(join(tmpdir(), 'goodput-slurm-'));
  // Other users' sbatch reads slurm.conf here, and their jobs' scripts live in the spool below.
  chmodSync(dir, 0o755);
  const nodes = Array.from({ length: count }, (_, i) => `gp${i + 1}`);
  for (const sub of ['state', 'log', 'dev', ...nodes.map((n) => `spool/${n}`)])
    mkdirSync(join(dir, sub), { recursive: true });
  const ports = await Promise.all(Array.from({ length: count + 1 }, () => freePort()));
  const host = hostname().split('.')[0]!;
  for (let g = 0; g < count * gpus; g++) await run('mknod', [join(dir, 'dev', `gpu${g}`), 'c', '195', String(g)]);
  const conf = join(dir, 'slurm.conf');
  writeFileSync(
    conf,
    [
      'ClusterName=goodputtest',
      `SlurmctldHost=${host}(127.0.0.1)`,
      `SlurmctldPort=${ports[0]}`,
      `SlurmdPort=${ports[1]}`,
      'AuthType=auth/none',
      'CredType=cred/none',
      'SlurmUser=root',
      'SlurmdUser=root',
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool/%n`,
      `SlurmctldPidFile=${dir}/slurmctld.pid`,
      `SlurmdPidFile=${dir}/slurmd-%n.pid`,
      `SlurmctldLogFile=${dir}/log/slurmctld.log`,
      `SlurmdLogFile=${dir}/log/slurmd-%n.log`,
      'ProctrackType=proctrack/pgid',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'GresTypes=gpu',
      'SlurmdParameters=config_overrides',
      'ReturnToService=2',
      'SchedulerType=sched/backfill',
      // Heterogeneous jobs (uneven GPUs per node) start only in backfill passes: run them often.
      'SchedulerParameters=bf_interval=1',
      'MinJobAge=600',
      'KillWait=5',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      ...(options.allow_groups ? ['JobCompType=jobcomp/filetxt', `JobCompLoc=${dir}/log/jobcomp.txt`] : []),
      ...nodes.map(
        (n, i) =>
          `NodeName=${n} NodeHostname=${host} NodeAddr=127.0.0.1 Port=${ports[i + 1]} CPUs=${cpus} RealMemory=4000 Gres=${typesOf(
            i,
          )
            .map((t) => `gpu:${t}:${gpus / typesOf(i).length}`)
            .join(',')}`,
      ),
      `PartitionName=${partition} Nodes=${nodes.join(',')} Default=YES MaxTime=INFINITE State=UP` +
        (options.allow_groups ? ` AllowGroups=${options.allow_groups.join(',')}` : ''),
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'gres.conf'),
    nodes
      .flatMap((n, i) =>
        typesOf(i).map((t, k, all) => {
          const per = gpus / all.length;
          const first = i * gpus + k * per;
          return `NodeName=${n} Name=gpu Type=${t} File=${dir}/dev/gpu[${first}-${first + per - 1}]\n`;
        }),
      )
      .join(''),
  );
  const env = { SLURM_CONF: conf };
  const cluster = clusterHandle(dir, nodes, partition, true);
  try {
    await run('/usr/sbin/slurmctld', ['-f', conf], { env: { ...process.env, ...env } });
    for (const n of nodes) {
      const slurmd = ['/usr/sbin/slurmd', '-f', conf, '-N', n];
      if (options.unshared?.node === n) {
        await run(
          'unshare',
          [
            '-m',
            '--propagation',
            'private',
            'sh',
            '-c',
            'mount -t tmpfs none "$1" && shift && exec "$@"',
            'sh',
            options.unshared.dir,
            ...slurmd,
          ],
          { env: { ...process.env, ...env } },
        );
      } else {
        await run(slurmd[0]!, slurmd.slice(1), { env: { ...process.env, ...env } });
      }
    }
    await cluster.untilIdle(60_000);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** A cluster handle with the means to wait for its nodes (the starter's and the sharer's alike). */
type ClusterHandle = SlurmCluster & { untilIdle(limit_ms: number): Promise<void> };

/**
 * The handle on the cluster whose files are in `dir`. `own`: `stop()` stops the daemons and
 * removes the directory; otherwise (a shared cluster) it cancels every job and leaves the nodes
 * idle for the next test file.
 */
function clusterHandle(dir: string, nodes: string[], partition: string, own: boolean): ClusterHandle {
  const conf = join(dir, 'slurm.conf');
  const env = { SLURM_CONF: conf };
  const cmd = async (command: string, args: readonly string[]) =>
    (await run(command, [...args], { env: { ...process.env, ...env }, timeout: 30_000 })).stdout;
  const states = async () =>
    (await cmd('sinfo', ['-h', '-N', '-o', '%N %t']).catch(() => ''))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  const controllerPid = () => Number(readIf(join(dir, 'slurmctld.pid')));
  const log = () => readIf(join(dir, 'log', 'slurmctld.log')).slice(-2000);
  let stopped = false;
  const cancelAll = async () => {
    await cmd('scancel', ['--full', `--partition=${partition}`]).catch(() => '');
    for (let i = 0; i < 60; i++) {
      const left = await cmd('squeue', ['-h', '-t', 'all', '-o', '%T']).catch(() => '');
      if (!/RUNNING|COMPLETING|PENDING|CONFIGURING/.test(left)) break;
      await sleep(250);
    }
  };
  const handle: ClusterHandle = {
    dir,
    env,
    nodes,
    partition,
    cmd,
    async untilIdle(limit_ms: number) {
      const deadline = Date.now() + limit_ms;
      for (;;) {
        const lines = await states();
        if (lines.filter((l) => / idle$/.test(l)).length === nodes.length) return;
        if (Date.now() > deadline)
          throw new Error(`the test Slurm cluster's nodes are not idle; sinfo: ${lines.join('; ')}\n${log()}`);
        await sleep(250);
      }
    },
    async stopController() {
      const pid = controllerPid();
      signal(pid, 'SIGTERM');
      for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
    },
    async startController() {
      await run('/usr/sbin/slurmctld', ['-f', conf], { env: { ...process.env, ...env } });
      // Until every node has registered again (drained or not; `*` marks one that has not): before,
      // sbatch cannot check a request against the nodes' GRES and queues what it would reject.
      for (let i = 0; ; i++) {
        const lines = await states();
        if (lines.filter((l) => / (idle|alloc|mix|comp|drain|drng)$/.test(l)).length === nodes.length) return;
        if (i > 240) throw new Error(`slurmctld did not come back; sinfo: ${lines.join('; ')}\n${log()}`);
        await sleep(250);
      }
    },
    async resumeNodes() {
      for (const [node, state] of (await states()).map((l) => l.split(' ')))
        if (node && state !== 'idle')
          await cmd('scontrol', ['update', `nodename=${node}`, 'state=resume']).catch(() => '');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (!own) {
        // A test that stopped the controller and failed before starting it again.
        if (!alive(controllerPid())) await handle.startController().catch(() => undefined);
        await cancelAll();
        await handle.resumeNodes(); // shared: the next file gets every node idle
        return;
      }
      await cancelAll();
      const pids = ['slurmctld.pid', ...nodes.map((n) => `slurmd-${n}.pid`)].map((f) => Number(readIf(join(dir, f))));
      for (const pid of pids) signal(pid, 'SIGTERM');
      for (let i = 0; i < 40 && pids.some(alive); i++) await sleep(100);
      for (const pid of pids) signal(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

function readIf(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
