/**
 * How the Slurm backend submits an attempt as its owner (`goodput up --backend slurm
 * --run-as-owner`, the server runs as root): sbatch itself runs as the owner's Unix account (uid,
 * gid), so Slurm authenticates the job as that user, as if they had typed sbatch: `squeue`,
 * `sacct`, associations, limits and fair share see them, partition access is checked for them
 * (`sbatch --uid` would check root's), and the job's processes run as them on every node.
 * The job's directories then (mirroring the local backend's layout, backends/local/run-as.ts):
 * the job directory and logs/ belong to the server, 0711 (the owner reaches its files by path and
 * can replace none); logs/replica-<rank>.log are created here as the owner's, 0600; checkpoint/
 * and run/ are the owner's, 0700 (the task wrapper writes its .pid/.exit files there as the
 * owner, and the server reads them as plain files only: run-files.ts readExitFile).
 */
import { chmodSync, chownSync, closeSync, constants, fchownSync, fchmodSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { LaunchRequest, RunAs } from '../backend.js';
import { ownerBaseEnv } from '../local/run-as.js';
import { jobDirs, replicaLogName } from '../run-files.js';
import { GoodputError } from '../../core/errors.js';
import { inheritedEnv } from './launch-inputs.js';
import { slurmRun } from './slurm-cli.js';
import { slurmWords } from './slurm-states.js';

/** What differs between a launch as the server and one as the job's owner. */
export interface SubmitAs {
  /** The environment the job starts from (before SLURM_CONF, the spec's and the contract's variables). */
  env: Record<string, string>;
  /** sbatch runs as this uid/gid (absent: as the server). */
  as?: { uid: number; gid: number };
  /** `--account` of the job. */
  account?: string;
}

/**
 * For a launch as `req.run_as`: sets owners and modes of the job's directories and creates the
 * ranks' logs (see the file comment); the environment is the owner's identity and the server's
 * locale and PATH, none of the server's other variables (they may hold secrets), and the account
 * the owner's Slurm account, else `server_account`. Without `run_as`, the server's environment and
 * account, as before. Idempotent (every attempt calls it).
 */
export function submitAs(req: LaunchRequest, world: number, server_account: string | undefined): SubmitAs {
  const owner = req.run_as;
  if (!owner) return { env: inheritedEnv(), ...(server_account ? { account: server_account } : {}) };
  prepareSlurmOwnerDirs(req.job_dir, world, owner);
  const env = ownerBaseEnv(owner);
  // Which cluster sbatch talks to is the server's setting, not a secret.
  if (process.env.SLURM_CONF !== undefined) env.SLURM_CONF = process.env.SLURM_CONF;
  const account = owner.slurm_account ?? server_account;
  return { env, as: { uid: owner.uid, gid: owner.gid }, ...(account ? { account } : {}) };
}

/** The directories and logs of a job run as `owner` (file comment); the logs of ranks 0..world-1 exist after it. */
export function prepareSlurmOwnerDirs(job_dir: string, world: number, owner: RunAs): void {
  const dirs = jobDirs(job_dir);
  chmodSync(job_dir, 0o711);
  chmodSync(dirs.logs, 0o711);
  // The job directory is the server's: the owner cannot swap these for links, so chown reaches them.
  for (const d of [dirs.checkpoint, dirs.run]) {
    chownSync(d, owner.uid, owner.gid);
    chmodSync(d, 0o700);
  }
  for (let rank = 0; rank < world; rank++) {
    const fd = openSync(
      join(dirs.logs, replicaLogName(rank)),
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      fchownSync(fd, owner.uid, owner.gid);
      fchmodSync(fd, 0o600);
    } finally {
      closeSync(fd);
    }
  }
}

/** What Slurm says when it will not take a job of this user and account (never its state or size). */
const OWNER_REFUSAL = new RegExp(
  [
    'Invalid account',
    'account/partition',
    'Invalid user',
    'Invalid group',
    "User's group not permitted",
    'Access/permission denied',
    'not permitted to use this partition',
    'Invalid qos',
  ].join('|'),
  'i',
);

/** How long a check that Slurm accepted is remembered (per uid, account and partition). */
const ACCEPTED_FOR_MS = 60_000;

/** Where `checkOwner` asks. */
export interface OwnerCheck {
  partition?: string;
  server_account?: string;
  qos?: string;
  env?: Readonly<Record<string, string>>;
}

const accepted = new Map<string, number>();

/**
 * Asks Slurm, as `account`, whether it would take a job of that user on the server's partition
 * and the owner's account (`sbatch --test-only`: validated, never queued), so that a user Slurm
 * refuses (an account they are not associated with, a partition closed to their group) is refused
 * at submit with Slurm's words instead of failing at launch. Throws E_SPEC for such a refusal;
 * anything else (slurmctld unreachable, a busy cluster) is left to the launch. Slurm without
 * accounting storage (no slurmdbd) checks no association: every account name is accepted.
 */
export async function checkOwner(account: RunAs, o: OwnerCheck, owner: string): Promise<void> {
  const slurm_account = account.slurm_account ?? o.server_account;
  const key = `${account.uid}\0${slurm_account ?? ''}\0${o.partition ?? ''}\0${o.qos ?? ''}`;
  if (Date.now() - (accepted.get(key) ?? -Infinity) < ACCEPTED_FOR_MS) return;
  const args = [
    '--test-only',
    '--nodes=1',
    '--ntasks=1',
    '--job-name=goodput-owner-check',
    '--output=/dev/null',
    ...(o.partition ? [`--partition=${o.partition}`] : []),
    ...(slurm_account ? [`--account=${slurm_account}`] : []),
    ...(o.qos ? [`--qos=${o.qos}`] : []),
    '--wrap=true',
  ];
  const env = { ...ownerBaseEnv(account), ...(process.env.SLURM_CONF ? { SLURM_CONF: process.env.SLURM_CONF } : {}) };
  try {
    await slurmRun('sbatch', args, {
      exact_env: { ...env, ...o.env },
      uid: account.uid,
      gid: account.gid,
      timeout_ms: 20_000,
    });
    accepted.set(key, Date.now());
  } catch (error) {
    const message = (error as Error).message;
    if (!(error instanceof GoodputError) || error.code !== 'E_SLURM' || !OWNER_REFUSAL.test(message)) return;
    const charged = slurm_account ? `account '${slurm_account}'` : 'its default account';
    throw new GoodputError(
      'E_SPEC',
      `user ${owner}: Slurm refuses jobs of Unix account '${account.user}' with ${charged}` +
        `${o.partition ? ` on partition '${o.partition}'` : ''}: ${slurmWords(message)}; an admin sets the ` +
        `Slurm account with 'goodput token create --user ${owner} --slurm-account ACCT' (one that ` +
        `'sacctmgr show assoc user=${account.user}' lists)`,
    );
  }
}
