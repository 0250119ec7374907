import { parsePortRange, type PortRange } from '../../backends/contract-env.js';
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseGpuSelection, resolveDevices } from '../../backends/local/devices.js';
import { defaultDataDir } from '../../client/connect.js';
import { GoodputError, usageError } from '../../core/errors.js';
import { DEFAULT_USER_JOB_LIMITS } from '../../control/controller-options.js';
import { startLiveDashboard } from '../../dashboard/live.js';
import { DEFAULT_POLICY, dataFiles, refuseIfRunning, startServer } from '../../server/server.js';
import { makeDataDir } from '../../datadir/secure.js';
import { numberFlag, parseFlags, PORT, type CliCommand } from '../command.js';
import { BACKEND_FLAGS, slurmFlags } from '../slurm-flags.js';

const flags = {
  'data-dir': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'dashboard-port': { type: 'string' },
  gpus: { type: 'string' },
  'cpu-slots': { type: 'string' },
  policy: { type: 'string' },
  'policy-param': { type: 'string', multiple: true },
  'policy-thread': { type: 'string' },
  shares: { type: 'string' },
  'interval-s': { type: 'string' },
  'grace-s': { type: 'string' },
  'port-range': { type: 'string' },
  'hung-timeout-s': { type: 'string' },
  'log-limit-mb': { type: 'string' },
  'checkpoint-retention-h': { type: 'string' },
  'job-retention-days': { type: 'string' },
  'max-active-jobs-per-user': { type: 'string' },
  'max-queued-jobs-per-user': { type: 'string' },
  detach: { type: 'boolean', short: 'd' },
  'run-as-owner': { type: 'boolean' },
  'single-user-network': { type: 'boolean' },
  'accept-store-loss': { type: 'boolean' },
  'shared-profiles': { type: 'boolean' },
  ...BACKEND_FLAGS,
} as const;

export const upCommand: CliCommand = {
  name: 'up',
  help: `Usage: goodput up [options]

  --data-dir DIR     store, logs and checkpoints (default: $GOODPUT_DATA_DIR or ~/.goodput)
  --port N           HTTP port on --host (default $GOODPUT_PORT or 7878; 0 = any free port)
  --host H           listen address (default 127.0.0.1); an address other than loopback needs
                     --run-as-owner, or --single-user-network (see below)
  --dashboard-port N web dashboard port on --host (default 7879, or any free port when --port
                     is 0; 0 = any free port; off = no dashboard); its URL is written to
                     DIR/dashboard.json; see docs/dashboard.md
  --gpus SEL         auto (default: every GPU nvidia-smi lists), N (the first N) or 0,1,...
                     (indices; one GPU alone: 3,)
  --cpu-slots N      use N CPU slots instead of GPUs (machines without GPUs, CI, demos)
  --policy NAME      scheduling policy (default goodput)
  --policy-param K=V set a tunable knob of the policy (repeatable; goodput's knobs are listed
                     in docs/policy.md), e.g. --policy-param rank_exponent=3
  --policy-thread M  where the policy decides: on (a worker thread of its own, so that API
                     calls and reports are answered while a large cluster's round decides),
                     off (the server's thread) or auto (default: a worker thread from 1,024 devices)
  --shares FILE      teams, weights and quotas per GPU type (YAML; docs/control-plane.md
                     "Shares"): the cluster is shared between people first, then the policy
                     maximizes goodput within each share; re-read when the file changes.
                     Without it every user is their own team of weight 1
  --interval-s S     seconds between scheduling rounds (default 60; rounds also run on
                     submit and when a job ends)
  --grace-s S        seconds replicas get to checkpoint after SIGTERM (default 30)
  --port-range A-B   draw each job's rendezvous port (MASTER_PORT) from A..B, e.g. 29500-29999
                     (default: any free port); for firewalls that open only a range
  --hung-timeout-s S a job that has reported (SDK) and then sends nothing for
                     max(S, 10 step times) is hung: its replicas are killed and it restarts
                     from its last checkpoint (default 300; plain jobs are never judged)
  --log-limit-mb N   cap of each replica log; past it the oldest half is dropped (default
                     100; 0 = no cap)
  --checkpoint-retention-h H  checkpoints of a job that ended are removed H hours after
                     it ended (default 168 = 7 days; 'never' keeps them)
  --job-retention-days N  jobs that ended over N days ago are removed with their events,
                     reports, logs and checkpoints; each user's GPU time and job count stay
                     in the usage totals (/metrics) (default 'never': the store keeps every job)
  --max-active-jobs-per-user N  most jobs one user may have not ended (default 2000; 0 = no
                     limit); a submit past it is refused: HTTP 429, error E_JOB_LIMIT
  --max-queued-jobs-per-user N  most queued (not yet started) jobs of one user (default 1000;
                     0 = no limit); 429 E_JOB_LIMIT past it
  -d, --detach       run in the background (log in DIR/server.log) and return;
                     'goodput down' stops it
  --run-as-owner     multi-user mode (the server runs as root): each job runs as its owner's
                     Unix account, set with 'goodput token create --user U --unix-user ACCOUNT';
                     with --backend slurm each attempt is a Slurm job of that account, charged
                     to the user's --slurm-account (else --account; docs/slurm.md)
  --single-user-network  listen beyond loopback in single-user mode although every job can
                     read the admin token and secret (any job can act as admin)
  --shared-profiles  one profile per profile key for all users: any user's jobs start from
                     what every user's jobs of the key measured (default: per user, so one
                     user's jobs cannot change how another's start; docs/control-plane.md)
  --accept-store-loss  serve even though the store lost acknowledged work (see
                     docs/control-plane.md, Store integrity, backup and restore)
  --backend B        local (default: replicas run on this machine) or slurm (one Slurm job
                     per attempt on the nodes and GPUs the policy chose; see docs/slurm.md)
  --partition P      slurm: the partition to use (default: every node with GPUs)
  --account A        slurm: the account jobs are charged to
  --qos Q            slurm: the quality of service of the jobs

The admin token is written to DIR/admin-token (mode 0600) at first start. Stopping the server
leaves running jobs alone; the next 'goodput up' re-adopts them (on the same host and port:
while they run, a start on another --port is refused, and --port 0 reuses the previous one).
Without --run-as-owner the server is single-user: every job runs as the server's account.`,
  async run(argv) {
    const { values } = parseFlags('up', argv, flags, false);
    const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
    const port = numberFlag('up', 'port', values.port ?? process.env.GOODPUT_PORT, 7878, {
      ...PORT,
      ...(values.port === undefined ? { source: 'GOODPUT_PORT' } : {}),
    });
    const dashboardPort =
      values['dashboard-port'] === 'off'
        ? undefined
        : numberFlag('up', 'dashboard-port', values['dashboard-port'], port === 0 ? 0 : 7879, PORT);
    const interval_s = numberFlag('up', 'interval-s', values['interval-s'], 60, { min: 0.1 });
    const grace_s = numberFlag('up', 'grace-s', values['grace-s'], 30, { min: 0 });
    let port_range: PortRange | undefined;
    try {
      if (values['port-range'] !== undefined) port_range = parsePortRange(values['port-range']);
    } catch (error) {
      throw usageError(`up: --port-range: ${(error as Error).message}`);
    }
    const hung_timeout_s = numberFlag('up', 'hung-timeout-s', values['hung-timeout-s'], 300, { min: 1 });
    const log_limit_mb = numberFlag('up', 'log-limit-mb', values['log-limit-mb'], 100, { min: 0 });
    const retention_h =
      values['checkpoint-retention-h'] === 'never'
        ? Infinity
        : numberFlag('up', 'checkpoint-retention-h', values['checkpoint-retention-h'], 168, { min: 0 });
    const retention = {
      log_limit_bytes: Math.round(log_limit_mb * 2 ** 20),
      checkpoint_retention_ms: retention_h * 3_600_000,
    };
    const jobRetentionDays =
      values['job-retention-days'] === undefined || values['job-retention-days'] === 'never'
        ? Infinity
        : numberFlag('up', 'job-retention-days', values['job-retention-days'], 0, { min: 0 });
    const user_limits = {
      max_active: numberFlag(
        'up',
        'max-active-jobs-per-user',
        values['max-active-jobs-per-user'],
        DEFAULT_USER_JOB_LIMITS.max_active,
        { integer: true, min: 0 },
      ),
      max_queued: numberFlag(
        'up',
        'max-queued-jobs-per-user',
        values['max-queued-jobs-per-user'],
        DEFAULT_USER_JOB_LIMITS.max_queued,
        { integer: true, min: 0 },
      ),
    };
    const cpu =
      values['cpu-slots'] === undefined
        ? undefined
        : numberFlag('up', 'cpu-slots', values['cpu-slots'], 1, { integer: true, min: 1 });
    const policy_thread = values['policy-thread'] ?? 'auto';
    if (policy_thread !== 'on' && policy_thread !== 'off' && policy_thread !== 'auto')
      throw usageError(`up: --policy-thread: '${policy_thread}' is not on, off or auto`);
    const selection = parseGpuSelection(values.gpus ?? 'auto');
    const slurm = slurmFlags('up', values);
    if (slurm && (values.gpus !== undefined || values['cpu-slots'] !== undefined))
      throw usageError(
        'up: --gpus and --cpu-slots are for the local backend; with --backend slurm the GPUs come from Slurm',
      );
    if (values.detach) return detach(argv, data_dir);
    const log = (line: string) => console.error(`${new Date().toISOString()} ${line}`);
    const devices = slurm ? [] : resolveDevices(selection, cpu, log);
    const server = await startServer({
      data_dir,
      host: values.host ?? '127.0.0.1',
      port,
      devices,
      ...(slurm ? { slurm } : {}),
      policy: values.policy ?? DEFAULT_POLICY,
      policy_params: values['policy-param'],
      policy_thread,
      interval_s,
      grace_s,
      hung_timeout_s,
      log,
      retention,
      ...(port_range ? { port_range } : {}),
      job_retention_ms: jobRetentionDays * 86_400_000,
      user_limits,
      run_as_owner: values['run-as-owner'] === true,
      single_user_network: values['single-user-network'] === true,
      accept_store_loss: values['accept-store-loss'] === true,
      shared_profiles: values['shared-profiles'] === true,
      ...(values.shares !== undefined ? { shares_file: resolve(values.shares) } : {}),
    });
    const nodes = server.controller.inventory();
    const count = nodes.reduce((k, n) => k + n.devices.length, 0);
    log(
      `goodput server on ${server.url}: policy ${server.policy}, ${slurm ? 'slurm' : 'local'} ` +
        `backend, ${count} ${nodes[0]?.devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)'} on ` +
        `${nodes.length} node(s), data in ${data_dir}`,
    );
    log(`admin token: ${dataFiles(data_dir).adminToken}`);
    if (slurm && /^(127\.|localhost$|::1$)/.test(values.host ?? '127.0.0.1'))
      log(
        `warning: replicas on other nodes cannot report to ${server.url}; pass --host 0.0.0.0 or an address the compute nodes reach`,
      );
    const dashboard =
      dashboardPort === undefined
        ? undefined
        : await startLiveDashboard(server, data_dir, values.host ?? '127.0.0.1', dashboardPort).catch(
            async (error: unknown) => {
              await server.close();
              throw error;
            },
          );
    if (dashboard) log(`dashboard on ${dashboard.url} (run 'goodput dashboard' for a login link; docs/dashboard.md)`);
    await new Promise<void>((done) => {
      const stop = (signal: string) => {
        log(`${signal}: stopping the server; running jobs keep running and are re-adopted by the next 'goodput up'`);
        void Promise.resolve(dashboard?.close())
          .then(() => server.close())
          .then(done, done);
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
    return 0;
  },
};

/** Starts `goodput up` (same flags, without --detach) in the background and waits until it serves. */
async function detach(argv: readonly string[], data_dir: string): Promise<number> {
  // Refused here, not by the child: its error would go into the running server's log.
  refuseIfRunning(data_dir);
  makeDataDir(data_dir, 0o700);
  const logPath = join(data_dir, 'server.log');
  const fd = openSync(logPath, 'a', 0o600);
  const logStart = statSync(logPath).size;
  const args = argv.filter((a) => a !== '--detach' && a !== '-d');
  const child = spawn(process.execPath, [process.argv[1]!, 'up', ...args], {
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  child.unref();
  const file = dataFiles(data_dir).server;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (existsSync(file)) {
      const info = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number }; // written atomically
      if (info.pid === child.pid) {
        console.log(
          `goodput server started in the background (pid ${child.pid}) on ${info.url}; log: ${logPath}; stop it with 'goodput down'`,
        );
        return 0;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // The child's own error says what to do (a port in use, a bad flag): repeat it here.
  const why = readFileSync(logPath, 'utf8')
    .slice(logStart)
    .split('\n')
    .map((line) => /error\[(E_\w+)\]:\s*(.*)/.exec(line))
    .filter((m) => m !== null)
    .pop();
  throw new GoodputError('E_START', `the server did not start${why ? ` (${why[1]}: ${why[2]})` : ''}; see ${logPath}`);
}
