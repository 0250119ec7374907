/**
 * How the local backend runs a replica as its owner's Unix account (multi-user mode). The
 * wrapper shell stays the server's (it writes the run/ files the server trusts); only the
 * command runs as the owner, through setpriv (uid, gid, the account's supplementary groups).
 * Layout of a job directory then: the job directory and logs/ belong to the server, mode 0711
 * (the owner reaches its files by path, lists nothing it could swap); checkpoint/ belongs to
 * the owner, 0700; logs/replica-<rank>.log are the owner's, 0600; run/ is the server's, 0700.
 */
import { chmodSync, chownSync, existsSync } from 'node:fs';
import type { RunAs } from '../backend.js';

/** Absolute path of setpriv (util-linux); never looked up on a PATH a job can set. */
export function setprivPath(): string | undefined {
  return ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
}

/** argv that runs `command` as `account`. Throws when setpriv is missing. */
export function asOwner(account: RunAs, command: readonly string[]): string[] {
  const setpriv = setprivPath();
  if (!setpriv) throw new Error('setpriv (util-linux) is needed to run jobs as their owner');
  return [setpriv, `--reuid=${account.uid}`, `--regid=${account.gid}`, '--init-groups', '--', ...command];
}

/**
 * The environment a replica of `account` starts from: the server's locale and PATH, the
 * account's identity; nothing else of the server's environment (it may hold secrets).
 */
export function ownerBaseEnv(account: RunAs): Record<string, string> {
  const env: Record<string, string> = { HOME: account.home, USER: account.user, LOGNAME: account.user };
  for (const k of ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'TERM']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('LC_') && v !== undefined) env[k] = v;
  return env;
}

/** Sets owners and modes of a job's directories (see the file comment). Idempotent. */
export function prepareOwnerDirs(job_dir: string, dirs: { checkpoint: string; logs: string; run: string }, account: RunAs): void {
  chmodSync(job_dir, 0o711);
  chmodSync(dirs.logs, 0o711);
  chmodSync(dirs.run, 0o700);
  chownSync(dirs.checkpoint, account.uid, account.gid);
  chmodSync(dirs.checkpoint, 0o700);
}
