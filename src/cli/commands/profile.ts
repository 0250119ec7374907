import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { cpuSlots, parseGpuSelection, resolveDevices } from '../../backends/local/devices.js';
import { LocalBackend } from '../../backends/local/local-backend.js';
import type { DeviceInfo } from '../../backends/backend.js';
import { deviceType } from '../../control/reports/profile-book.js';
import { usageError } from '../../core/errors.js';
import { defaultDataDir } from '../../client/connect.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';
import { BACKEND_FLAGS, slurmFlags } from '../slurm-flags.js';
import { slurmTarget } from '../profile/slurm-target.js';
import { checkMissingDashDash } from '../job-command.js';
import { unwrapLauncherCommand } from '../../admission/torchrun-python.js';
import { devicesOfOneType } from '../profile/one-type.js';
import { outputDir, saveToDataDir, writeProfileFile, type ProfileFile } from '../../datadir/profile-file.js';
import { makeDataDir } from '../../datadir/secure.js';
import { withoutHeldDevices } from '../profile/held-devices.js';
import { runProfile, workDir, type ProfileRun } from '../profile/runner.js';
import { defaultProfileKey, pythonScript } from '../../core/profile-key.js';
import { sdkOf } from '../../admission/admit.js';

const flags = {
  profile: { type: 'string' },
  'time-s': { type: 'string' },
  gpus: { type: 'string' },
  'cpu-slots': { type: 'string' },
  out: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  host: { type: 'string' },
  ...BACKEND_FLAGS,
} as const;

export const profileCommand: CliCommand = {
  name: 'profile',
  options: flags,
  help: `Usage: goodput profile [options] -- <command> [args...]

Runs the SDK script for a bounded time on this machine's GPUs (or CPU slots), steering its batch
configuration through the report endpoint: several local batch sizes and accumulation steps at
1, 2, 4, ... replicas up to the devices given. Records throughput, gradient noise, memory per
sample (GPU: the allocator peak the SDK reports; CPU: resident memory of the replicas) and the
largest local batch that fits, and stores the fitted profile under the job's profile key and
device type: in the data directory's store (the one the control plane learns from), or in a
file with --out. Ctrl-C stops early and keeps
what was measured (exit 130). 'goodput plan KEY|FILE' reads it.

  --profile KEY      profile key (default: the script or module name, as 'goodput submit')
  --time-s N         wall-clock budget of the whole sweep (default 60)
  --gpus SEL         auto | N (the first N) | 0,1,... (one GPU: 3,)   --cpu-slots N   CPU slots
  --out FILE         write the profile to FILE instead of the data directory
  --data-dir DIR     data directory (default $GOODPUT_DATA_DIR or ~/.goodput)
  --json             print the profile as JSON on stdout
  --backend B        local (default: this machine's devices) or slurm (a Slurm job per launch
                     on one node of the cluster, as 'goodput up --backend slurm'; docs/slurm.md)
  --partition P      slurm: the partition (default: every node with GPUs); --gpus N takes at
                     most N GPUs of the node with the most free ones
  --account A        slurm: the account the jobs are charged to
  --qos Q            slurm: the quality of service of the jobs
  --host H           slurm: where the report endpoint listens (default 0.0.0.0: every interface,
                     the replicas given this machine's host name); the nodes must reach it
With --backend slurm the launches' logs and checkpoints go under DIR/profile-runs, which every
node must see at the same path (checked, as 'goodput up --backend slurm' checks DIR).`,
  async run(argv) {
    const split = argv.indexOf('--');
    const flagArgs = split < 0 ? argv : argv.slice(0, split);
    let command = split < 0 ? [] : argv.slice(split + 1);
    checkMissingDashDash('profile', flagArgs, flags, false);
    const { values, positionals } = parseFlags('profile', flagArgs, flags);
    if (command.length === 0) throw usageError("profile: give the command after '--'. See 'goodput profile --help'.");
    if (positionals.length > 0)
      throw usageError(`profile: unexpected argument '${positionals[0]}' (put the command after '--').`);
    const unwrapped = unwrapLauncherCommand('profile', command, undefined);
    if (unwrapped !== undefined) {
      // The sweep chooses the replica counts; the launcher's is not one of them.
      command = unwrapped.command;
      process.stderr.write(`${unwrapped.note}\n`);
    }
    const time_s = numberFlag('profile', 'time-s', values['time-s'], 60, { min: 1 });
    const cpu =
      values['cpu-slots'] === undefined
        ? undefined
        : numberFlag('profile', 'cpu-slots', values['cpu-slots'], 1, { integer: true, min: 1 });
    const log = (line: string): void => void process.stderr.write(`goodput: ${line}\n`);
    const slurm = slurmFlags('profile', values);
    if (slurm && cpu !== undefined) {
      throw usageError(
        'profile: --cpu-slots is for the local backend; with --backend slurm the GPUs come from Slurm ' +
          '(--gpus N: at most N)',
      );
    }
    if (!slurm && values.host !== undefined) {
      throw usageError("profile: --host needs --backend slurm (the local backend's replicas report on 127.0.0.1)");
    }
    const max_gpus = slurm ? slurmGpuCount(values.gpus) : undefined;
    const localDevices = (): DeviceInfo[] => {
      if (cpu !== undefined) return cpuSlots(cpu);
      return resolveDevices(values.gpus === undefined ? 'auto' : parseGpuSelection(values.gpus), undefined, log);
    };
    const resolved = slurm ? [] : localDevices();
    const key = values.profile ?? defaultProfileKey(command, process.cwd());
    const controller = new AbortController();
    const onSignal = (): void => {
      if (controller.signal.aborted) return;
      process.stderr.write('\n');
      log('interrupted: stopping the replicas and keeping what was measured');
      controller.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // Where the profile goes is checked before the sweep, not after minutes of measuring.
    const out = values.out === undefined ? undefined : resolve(values.out);
    const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
    if (out !== undefined) outputDir(out);
    if (out === undefined || slurm) makeDataDir(data_dir, 0o700);
    // Slurm's nodes write the launches' logs and exit files: a folder of the data directory, which
    // they must share (checked by slurmTarget); the local backend's stay in the temp folder.
    const work_dir = workDir(slurm ? join(data_dir, 'profile-runs') : tmpdir());
    let target: Pick<ProfileRun, 'backend' | 'devices' | 'node' | 'listen'>;
    try {
      if (slurm) target = await slurmTarget(slurm, work_dir, max_gpus, values.host, log);
      else {
        const chosen = values.gpus !== undefined && values.gpus !== 'auto';
        const devices = devicesOfOneType(await withoutHeldDevices(resolved, chosen, values, log), chosen, log);
        // The replicas run through the local backend, as a job's do under `goodput up` (the
        // contract's variables, process groups, logs and signals of src/backends/local/).
        target = { backend: new LocalBackend({ devices }), devices };
      }
    } catch (error) {
      rmSync(work_dir, { recursive: true, force: true });
      throw error;
    }
    const devices = target.devices;
    const gpu_type = deviceType(devices[0]);
    log(`profiling '${key}' on ${devices.length} ${gpu_type} device(s) for at most ${time_s} s`);
    // Only SDK scripts report; a script that visibly does not import goodput is told so up front,
    // and again in the error when it never reports (it may import the SDK through another module).
    const plainHint =
      sdkOf({ command, workdir: process.cwd() }) === false
        ? `${pythonScript(command)} does not import goodput, and goodput profile measures only ` +
          `scripts that report through the SDK (wrap the model in goodput.torch's ` +
          `AdaptiveDataParallel: docs/sdk.md; docs/migrating-from-adaptdl.md for AdaptDL code)`
        : undefined;
    if (plainHint) log(`warning: ${plainHint}`);
    const bar = progressBar();
    let result;
    try {
      result = await runProfile({
        command,
        workdir: process.cwd(),
        ...target,
        gpu_type,
        time_s,
        work_dir,
        signal: controller.signal,
        progress: bar,
        no_report_hint: plainHint,
        ...(slurm ? { waiting_hint: 'the Slurm job may still wait for GPUs (squeue shows it)' } : {}),
      });
      rmSync(work_dir, { recursive: true, force: true }); // replica logs and checkpoints; kept when the script failed (the error names its log)
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      bar.end();
    }
    const { profile, complete } = result;
    const file: ProfileFile = { kind: 'goodput.profile', version: 1, key, complete, devices: [profile] };
    if (profile.points.length === 0) {
      log('nothing was measured: no profile stored');
      for (const note of profile.notes) log(`note: ${note}`);
      return controller.signal.aborted ? 130 : 1;
    }
    let where: string;
    try {
      if (out !== undefined) {
        writeProfileFile(out, file);
        where = out;
      } else {
        await saveToDataDir(data_dir, key, profile, `profile-${basename(command[0]!)}-${Date.now()}`);
        where = `${data_dir} (key '${key}', ${gpu_type})`;
      }
    } catch (error) {
      // Checked before the sweep, but the disk can fill or the path change during it: what was
      // measured is written to a file of its own rather than lost.
      const rescue = join(tmpdir(), `goodput-profile-${key.replace(/[^A-Za-z0-9._-]/g, '_')}-${Date.now()}.json`);
      writeProfileFile(rescue, file);
      log(
        `error: could not store the profile in ${out ?? data_dir} (${(error as Error).message}); ` +
          `it is saved in ${rescue}: 'goodput plan ${rescue}' reads it`,
      );
      return 1;
    }
    if (values.json) console.log(JSON.stringify(file, null, 2));
    log(
      `${complete ? 'profile' : 'partial profile'} of '${key}': ${profile.points.length} ` +
        `configuration(s) at replicas ` +
        `${[...new Set(profile.points.map((p) => p.num_replicas))].join(', ')}; stored in ${where}`,
    );
    for (const note of profile.notes) log(`note: ${note}`);
    log(
      `next: goodput plan ${values.out ?? key}${values.out || !values['data-dir'] ? '' : ` --data-dir ${values['data-dir']}`}`,
    );
    return controller.signal.aborted ? 130 : 0;
  },
};

/** `--gpus` with --backend slurm: a count (at most that many GPUs of one node), or every usable one. */
function slurmGpuCount(gpus: string | undefined): number | undefined {
  if (gpus === undefined || gpus === 'auto') return undefined;
  const selection = parseGpuSelection(gpus);
  if (typeof selection !== 'number') {
    throw usageError(
      `profile: with --backend slurm, --gpus takes a count (Slurm picks which GPUs a job gets); ` + `got '${gpus}'`,
    );
  }
  return selection;
}

/** A progress bar on stderr (a line per step when stderr is not a terminal). */
function progressBar(): ((fraction: number, what: string) => void) & { end(): void } {
  const tty = process.stderr.isTTY === true;
  let drawn = false;
  const draw = (fraction: number, what: string): void => {
    const f = Math.min(Math.max(fraction, 0), 1);
    if (tty) {
      const width = 24;
      const full = Math.round(f * width);
      process.stderr.write(
        `\r[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${String(Math.round(f * 100)).padStart(3)}% ${what}\x1b[K`,
      );
      drawn = true;
    } else {
      process.stderr.write(`goodput: profile ${String(Math.round(f * 100)).padStart(3)}% ${what}\n`);
    }
  };
  return Object.assign(draw, {
    end: () => {
      if (drawn) process.stderr.write('\n');
    },
  });
}
