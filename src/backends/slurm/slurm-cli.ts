/** Running Slurm's client commands (sinfo, squeue, sbatch, scancel, srun) with errors as GoodputErrors. */
import { execFile } from 'node:child_process';
import { GoodputError } from '../../core/errors.js';

/** Output of a command that exited 0. */
export interface SlurmOutput {
  stdout: string;
  stderr: string;
}

const UNREACHABLE =
  /Unable to contact slurm controller|Socket timed out|Connection refused|Zero Bytes were transmitted|slurm_load_|Communication connection failure|Invalid user for SlurmUser|Unable to establish/i;

/** How to run one command. */
export interface SlurmRunOptions {
  /** Added to this process's environment (SLURM_CONF in tests). */
  env?: Readonly<Record<string, string>>;
  /** The whole environment instead (sbatch: the job's environment is the command's). */
  exact_env?: Readonly<Record<string, string>>;
  input?: string;
  timeout_ms?: number;
  /** Run as this account (a root server submitting as a job's owner); absent: as this process. */
  uid?: number;
  gid?: number;
}

/**
 * Runs `command args`. Throws E_BACKEND_UNAVAILABLE when the command is missing or slurmctld
 * cannot be reached, E_SLURM (with Slurm's own message) for any other failure.
 */
export function slurmRun(command: string, args: readonly string[], o: SlurmRunOptions = {}): Promise<SlurmOutput> {
  return new Promise((resolve, reject) => {
    const env = o.exact_env ?? { ...process.env, ...o.env };
    const child = execFile(
      command,
      [...args],
      {
        env,
        timeout: o.timeout_ms ?? 60_000,
        maxBuffer: 256 * 1024 * 1024,
        ...(o.uid !== undefined ? { uid: o.uid } : {}),
        ...(o.gid !== undefined ? { gid: o.gid } : {}),
      },
      (error, stdout, stderr) => {
        if (!error) return resolve({ stdout, stderr });
        const code = (error as NodeJS.ErrnoException).code;
        const text = (stderr || error.message).trim().split('\n').slice(-3).join(' ');
        if (code === 'ENOENT')
          return reject(
            new GoodputError(
              'E_BACKEND_UNAVAILABLE',
              `${command} not found: install Slurm's client commands (Debian: slurm-client) on this machine`,
            ),
          );
        if (UNREACHABLE.test(text) || error.killed)
          return reject(
            new GoodputError(
              'E_BACKEND_UNAVAILABLE',
              `slurmctld unreachable (${command}: ${text}); check that 'sinfo' works here (SLURM_CONF, network, slurmctld)`,
            ),
          );
        reject(new GoodputError('E_SLURM', `${command} ${args.join(' ')}: ${text}`));
      },
    );
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}
