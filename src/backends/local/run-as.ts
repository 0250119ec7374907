/**
 * How the local backend runs a replica as its owner's Unix account (multi-user mode). The
 * wrapper shell stays the server's (it writes the run/ files the server trusts); only the
 * command runs as the owner, through setpriv (uid, gid, the account's supplementary groups);
 * the spec's variables reach only processes of the owner (see `asOwner`).
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

/** Prefix under which the spec's variables cross the processes that still run as root. */
const HIDDEN = 'GPENV_';

/**
 * Runs as the owner, after setpriv: turns every GPENV_<NAME> named in its arguments back into
 * NAME and execs the command. Names match the spec schema's ^[A-Za-z_][A-Za-z0-9_]*$, so the
 * eval'd text is `export NAME="${GPENV_NAME}"`: the value is expanded, never evaluated.
 */
const RESTORE_ENV = String.raw`while [ "$1" != -- ]; do eval "export $1=\"\${GPENV_$1}\"; unset GPENV_$1"; shift; done; shift; exec "$@"`;

/**
 * argv and environment that run `command` as `account` with the spec's variables `user_env`.
 * The wrapper shell and setpriv run as root, so they must not see the user's variables under
 * their own names (LD_PRELOAD, LD_LIBRARY_PATH, PATH, GCONV_PATH... would run the user's code as
 * root): they travel as GPENV_<NAME> and are restored by a shell that already runs as the owner.
 * Throws when setpriv is missing.
 */
export function asOwner(
  account: RunAs,
  command: readonly string[],
  user_env: Readonly<Record<string, string>>,
): { argv: string[]; env: Record<string, string> } {
  const setpriv = setprivPath();
  if (!setpriv) throw new Error('setpriv (util-linux) is needed to run jobs as their owner');
  const names = Object.keys(user_env);
  const env = ownerBaseEnv(account);
  for (const name of names) env[HIDDEN + name] = user_env[name]!;
  const argv = [
    setpriv,
    `--reuid=${account.uid}`,
    `--regid=${account.gid}`,
    '--init-groups',
    '--',
    '/bin/sh',
    '-c',
    RESTORE_ENV,
    'goodput-env',
    ...names,
    '--',
    ...command,
  ];
  return { argv, env };
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
export function prepareOwnerDirs(
  job_dir: string,
  dirs: { checkpoint: string; logs: string; run: string },
  account: RunAs,
): void {
  chmodSync(job_dir, 0o711);
  chmodSync(dirs.logs, 0o711);
  chmodSync(dirs.run, 0o700);
  chownSync(dirs.checkpoint, account.uid, account.gid);
  chmodSync(dirs.checkpoint, 0o700);
}
