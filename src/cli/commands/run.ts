import { closeSync, existsSync, mkdtempSync, openSync, readSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseGpuSelection, resolveDevices } from '../../backends/local/devices.js';
import { killGroup } from '../../backends/local/process-info.js';
import { replicaLogPath } from '../../backends/run-files.js';
import { withoutHeldDevices } from '../profile/held-devices.js';
import { GoodputError, usageError } from '../../core/errors.js';
import type { JobSpec } from '../../core/job-spec.js';
import { DEFAULT_POLICY, startServer, type RunningServer } from '../../server/server.js';
import { ACTIVE_STATES, isTerminal } from '../../store/lifecycle.js';
import type { JobRecord } from '../../store/types.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';
import { checkMissingDashDash } from '../job-command.js';
import { jobFlags, specFromFlags, splitCommand } from './submit.js';
import { terminalText } from '../../util/printable.js';

const flags = {
  ...jobFlags,
  'data-dir': { type: 'string' },
  gpus: { type: 'string' },
  'cpu-slots': { type: 'string' },
  policy: { type: 'string' },
  'interval-s': { type: 'string' },
  'grace-s': { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

/**
 * Signals that cancel the job (its replicas checkpoint and exit) before the supervisor exits.
 * Without a handler, a hangup (the terminal closing, an SSH session dropping) or a quit (Ctrl-\)
 * would end this process at once and leave the replicas running with no one to restart, rescale
 * or stop them; torchrun's agent stops its workers on the same four.
 */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

export const runCommand: CliCommand = {
  name: 'run',
  options: flags,
  help: `Usage: goodput run [options] -- <command> [args...]

Runs the control plane in this process for one job: places it on this machine's GPUs
(or CPU slots), rescales it by checkpoint-restart as its goodput model suggests, restarts it
from its checkpoint after failures, and streams rank 0's log. Exit status: 0 when the job
succeeds, 1 when it fails, 130 when interrupted (Ctrl-C cancels the job, its replicas get
SIGTERM to checkpoint, and a second Ctrl-C stops them at once; SIGTERM, a hangup and Ctrl-\\
cancel too: to keep a job past your session, run it in tmux or screen, or submit it to
'goodput up'). Rerunning the same command with the same --data-dir after this process was
killed resumes its job instead of starting a second one.

  --max-replicas R   most replicas (GPUs) to use (default 1); other job flags as 'goodput submit'
  --profile KEY      profile key (default: the script or module name, see 'goodput submit
                     --help'); a rerun with the same --data-dir starts from what earlier runs
                     of the key measured
  --gpus SEL         auto | N (the first N) | 0,1,... (one GPU: 3,)   --cpu-slots N   CPU slots
  --policy NAME      scheduling policy (default goodput)
  --interval-s S     seconds between scheduling rounds (default 30)
  --grace-s S        seconds to checkpoint after SIGTERM (default 30)
  --data-dir DIR     where checkpoints and logs go (default: a new temp directory)
  -q, --quiet        do not stream the log`,
  async run(argv) {
    const [flagArgs, command] = splitCommand(argv);
    checkMissingDashDash('run', flagArgs, flags, false);
    const { values, positionals } = parseFlags('run', flagArgs, flags);
    if (!command || command.length === 0)
      throw usageError("run: give the command after '--'. See 'goodput run --help'.");
    if (positionals.length > 0)
      throw usageError(`run: unexpected argument '${positionals[0]}' (put the command after '--').`);
    const spec = specFromFlags('run', values, undefined, command);
    const data_dir = values['data-dir'] ? resolve(values['data-dir']) : mkdtempSync(join(tmpdir(), 'goodput-run-'));
    const cpu =
      values['cpu-slots'] === undefined
        ? undefined
        : numberFlag('run', 'cpu-slots', values['cpu-slots'], 1, { integer: true, min: 1 });
    const log = (line: string) => console.error(`goodput: ${line}`);
    // Not the GPUs of another goodput server's jobs (its data directory is the default one, not this run's).
    const devices = await withoutHeldDevices(
      resolveDevices(parseGpuSelection(values.gpus ?? 'auto'), cpu, log),
      values.gpus !== undefined && values.gpus !== 'auto',
      {},
      log,
    );
    const grace_s = numberFlag('run', 'grace-s', values['grace-s'], 30, { min: 0 });
    const server = await startServer({
      data_dir,
      host: '127.0.0.1',
      port: 0,
      devices,
      policy: values.policy ?? DEFAULT_POLICY,
      interval_s: numberFlag('run', 'interval-s', values['interval-s'], 30, { min: 0.1 }),
      grace_s,
      log,
    });
    const user = safeUser();
    const { job, notes } = await resumeOrSubmit(server, spec, user, log).catch(async (error: unknown) => {
      await server.close(); // e.g. E_INFEASIBLE: nothing to supervise
      throw error;
    });
    log(`job ${job.id} (${job.name}) on ${devices.length} device(s), policy ${server.policy}; data in ${data_dir}`);
    for (const note of notes) log(note);
    let interrupted = false;
    let hungUp = false;
    // A closed terminal fails every later write (EIO); the supervisor must still see its job out.
    const ignore = (): void => {};
    process.stdout.on('error', ignore);
    process.stderr.on('error', ignore);
    const liveReplicas = async () => (await server.store.listReplicas(job.id)).filter((r) => r.exit_code === null);
    let forced = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signal === 'SIGHUP') hungUp = true;
      if (interrupted) {
        // A second Ctrl-C is the user's choice not to wait for the checkpoint (other signals
        // repeat on their own, e.g. a hangup followed by the session's SIGTERM).
        if (signal !== 'SIGINT' || forced) return;
        forced = true;
        log(
          `interrupted again: stopping the replicas now (SIGKILL); what they did since their last checkpoint is lost`,
        );
        void liveReplicas().then(
          (live) => live.forEach((r) => killGroup(r.pid, 'SIGKILL')),
          () => {},
        );
        return;
      }
      interrupted = true;
      log(
        `${signal === 'SIGINT' ? 'interrupted' : signal}: cancelling the job (replicas get SIGTERM to checkpoint; Ctrl-C again to stop them at once)`,
      );
      void server.controller.cancel(job.id, user).catch(() => {});
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
    const logPath = replicaLogPath(server.controller.jobDir(job.id), 0);
    // A resumed job's log so far was streamed by the earlier run: go on from its end.
    let offset = job.launches > 0 && existsSync(logPath) ? statSync(logPath).size : 0;
    let final: JobRecord | undefined;
    try {
      for (;;) {
        if (!values.quiet && !hungUp) offset = tail(logPath, offset);
        const current = await server.store.getJob(job.id);
        if (current && isTerminal(current.state)) {
          const live = await liveReplicas();
          if (live.length === 0 || Date.now() > (current.finished_at_ms ?? 0) + (grace_s + 2) * 1000) {
            for (const r of live) killGroup(r.pid, 'SIGKILL');
            final = current;
            break;
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      if (!values.quiet && !hungUp) tail(logPath, offset);
    } finally {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
      await server.close();
    }
    log(
      `job ${job.id} ${final.state}: ${terminalText(final.reason)} (restarts ${Math.max(0, final.launches - 1)}, step ${final.step})`,
    );
    return final.state === 'succeeded' ? 0 : final.state === 'cancelled' ? 130 : 1;
  },
};

/**
 * The job to supervise. A data directory whose store still holds an unfinished job (an earlier
 * `goodput run` that was killed, its replicas re-adopted or to be restarted from its checkpoint)
 * must not get a second job beside it: two copies of one script would share its devices and its
 * checkpoint files. So the same command in the same workdir resumes that job, and any other
 * unfinished job is a conflict the user settles (resume it by rerunning its command, then Ctrl-C
 * cancels it; or use another --data-dir).
 */
async function resumeOrSubmit(
  server: RunningServer,
  spec: JobSpec,
  user: string,
  log: (line: string) => void,
): Promise<{ job: JobRecord; notes: string[] }> {
  const unfinished = (await server.store.listJobs({ states: ACTIVE_STATES })).filter((j) => !isTerminal(j.state));
  const same = unfinished.find(
    (j) =>
      j.user === user &&
      j.spec.workdir === spec.workdir &&
      JSON.stringify(j.spec.command) === JSON.stringify(spec.command),
  );
  const other = unfinished.find((j) => j !== same);
  if (other) {
    const command = other.spec.command.join(' ');
    throw new GoodputError(
      'E_CONFLICT',
      `run: this data directory holds unfinished job ${other.id} (${other.name}, ${other.state}) ` +
        `of an earlier run: '${command.length > 200 ? `${command.slice(0, 200)}...` : command}' in ` +
        `${other.spec.workdir ?? '?'}. ` +
        `Rerun that command with this --data-dir to resume it (Ctrl-C then cancels it), or pass another --data-dir`,
    );
  }
  if (!same) return server.controller.submitWithNotes({ ...spec, user }, user, user);
  log(
    `resuming job ${same.id} (${same.name}), left ${same.state} by an earlier goodput run of ` +
      `this command in this data directory (step ${same.step}); it keeps its earlier settings`,
  );
  return { job: same, notes: [] };
}

/** Copies new bytes of `path` from `offset` to stdout; returns the new offset. */
function tail(path: string, offset: number): number {
  if (!existsSync(path)) return offset;
  const size = statSync(path).size;
  // A log cut to its newest part at its cap (backends/local/log-writer.ts) goes on from its new end.
  if (size < offset) return size;
  if (size === offset) return offset;
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    process.stdout.write(buffer);
  } finally {
    closeSync(fd);
  }
  return size;
}

function safeUser(): string {
  try {
    const name = userInfo().username.replace(/[^A-Za-z0-9._-]/g, '');
    return name || 'local';
  } catch {
    return 'local';
  }
}
