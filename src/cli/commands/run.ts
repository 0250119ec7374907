import { closeSync, existsSync, mkdtempSync, openSync, readSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseGpuSelection, resolveDevices } from '../../backends/local/devices.js';
import { killGroup } from '../../backends/local/process-info.js';
import { replicaLogPath } from '../../backends/run-files.js';
import { usageError } from '../../core/errors.js';
import { DEFAULT_POLICY, startServer } from '../../server/server.js';
import { isTerminal } from '../../store/lifecycle.js';
import type { JobRecord } from '../../store/types.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';
import { checkMissingDashDash } from '../job-command.js';
import { jobFlags, specFromFlags, splitCommand } from './submit.js';

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

export const runCommand: CliCommand = {
  name: 'run',
  options: flags,
  summary: 'Supervise one elastic job on this machine (no separate server)',
  help: `Usage: goodput run [options] -- <command> [args...]

Runs the control plane in this process for one job: places it on this machine's GPUs
(or CPU slots), rescales it by checkpoint-restart as its goodput model suggests, restarts it
from its checkpoint after failures, and streams rank 0's log. Exit status: 0 when the job
succeeds, 1 when it fails, 130 when interrupted (Ctrl-C cancels the job).

  --max-replicas R   most replicas (GPUs) to use (default 1); other job flags as 'goodput submit'
  --profile KEY      profile key (default: the script or module name, see 'goodput submit
                     --help'); a rerun with the same --data-dir starts from what earlier runs
                     of the key measured
  --gpus SEL         auto | N | 0,1,...        --cpu-slots N   CPU slots instead of GPUs
  --policy NAME      scheduling policy (default goodput)
  --interval-s S     seconds between scheduling rounds (default 30)
  --grace-s S        seconds to checkpoint after SIGTERM (default 30)
  --data-dir DIR     where checkpoints and logs go (default: a new temp directory)
  -q, --quiet        do not stream the log`,
  async run(argv) {
    const [flagArgs, command] = splitCommand(argv);
    checkMissingDashDash('run', flagArgs, flags, false);
    const { values, positionals } = parseFlags('run', flagArgs, flags);
    if (!command || command.length === 0) throw usageError("run: give the command after '--'. See 'goodput run --help'.");
    if (positionals.length > 0) throw usageError(`run: unexpected argument '${positionals[0]}' (put the command after '--').`);
    const spec = specFromFlags('run', values, undefined, command);
    const data_dir = values['data-dir'] ? resolve(values['data-dir']) : mkdtempSync(join(tmpdir(), 'goodput-run-'));
    const cpu = values['cpu-slots'] === undefined ? undefined : numberFlag('run', 'cpu-slots', values['cpu-slots'], 1, { integer: true, min: 1 });
    const log = (line: string) => console.error(`goodput: ${line}`);
    const devices = resolveDevices(parseGpuSelection(values.gpus ?? 'auto'), cpu, log);
    const grace_s = numberFlag('run', 'grace-s', values['grace-s'], 30, { min: 0 });
    const server = await startServer({
      data_dir, host: '127.0.0.1', port: 0, devices, policy: values.policy ?? DEFAULT_POLICY,
      interval_s: numberFlag('run', 'interval-s', values['interval-s'], 30, { min: 0.1 }), grace_s, log,
    });
    const user = safeUser();
    const job = await server.controller.submit({ ...spec, user }, user, user).catch(async (error: unknown) => {
      await server.close(); // e.g. E_INFEASIBLE: nothing to supervise
      throw error;
    });
    log(`job ${job.id} (${job.name}) on ${devices.length} device(s), policy ${server.policy}; data in ${data_dir}`);
    let interrupted = false;
    const onSignal = () => {
      if (interrupted) return;
      interrupted = true;
      log('interrupted: cancelling the job (replicas get SIGTERM to checkpoint)');
      void server.controller.cancel(job.id, user).catch(() => {});
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const logPath = replicaLogPath(server.controller.jobDir(job.id), 0);
    let offset = 0;
    let final: JobRecord | undefined;
    try {
      for (;;) {
        if (!values.quiet) offset = tail(logPath, offset);
        const current = await server.store.getJob(job.id);
        if (current && isTerminal(current.state)) {
          const live = (await server.store.listReplicas(job.id)).filter((r) => r.exit_code === null);
          if (live.length === 0 || Date.now() > (current.finished_at_ms ?? 0) + (grace_s + 2) * 1000) {
            for (const r of live) killGroup(r.pid, 'SIGKILL');
            final = current;
            break;
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      if (!values.quiet) tail(logPath, offset);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await server.close();
    }
    log(`job ${job.id} ${final.state}: ${final.reason} (restarts ${Math.max(0, final.launches - 1)}, step ${final.step})`);
    return final.state === 'succeeded' ? 0 : final.state === 'cancelled' ? 130 : 1;
  },
};

/** Copies new bytes of `path` from `offset` to stdout; returns the new offset. */
function tail(path: string, offset: number): number {
  if (!existsSync(path)) return offset;
  const size = statSync(path).size;
  if (size <= offset) return offset;
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
