/**
 * Multi-user mode (`goodput up --run-as-owner`): each user's jobs run as the Unix account an
 * admin set for that user (`goodput token create --user U --unix-user ACCOUNT`). Accounts are
 * resolved through NSS (`getent passwd`), so LDAP accounts work like local ones.
 */
import { spawnSync } from 'node:child_process';
import type { RunAs } from '../backends/backend.js';
import { GoodputError } from '../core/errors.js';
import type { Store } from '../store/store.js';

import { UNIX_USER } from '../core/wire.js';

export { UNIX_USER };

/** The account called `name` (uid, gid, home), or undefined when NSS does not know it. */
export function lookupAccount(name: string): RunAs | undefined {
  if (!UNIX_USER.test(name)) return undefined;
  const out = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  const [user, , uid, gid, , home] = out.stdout.trim().split(':');
  if (user !== name || uid === undefined || gid === undefined) return undefined;
  return { user: name, uid: Number(uid), gid: Number(gid), home: home || '/' };
}

/**
 * The Slurm account `owner`'s jobs are charged to, or undefined (the server's --account, else the
 * Unix account's default in Slurm). The one place that decides it: today the per-user mapping
 * (`goodput token create --user U --slurm-account ACCT`); once teams exist (shares file, issue
 * #48), the owner's team's account when no per-user one is set.
 */
export async function slurmAccountFor(
  store: Pick<Store, 'getSlurmAccount'>,
  owner: string,
): Promise<string | undefined> {
  return store.getSlurmAccount(owner);
}

/**
 * The account `owner`'s jobs run as, with its Slurm account (slurmAccountFor). Throws E_SPEC (at
 * submit; E_LAUNCH at launch through the controller) when none is set, the account does not
 * exist, or it is root.
 */
export async function ownerAccount(store: Store, owner: string): Promise<RunAs> {
  const name = await store.getUnixUser(owner);
  if (name === undefined) {
    throw new GoodputError(
      'E_SPEC',
      `user ${owner} has no Unix account, and this server runs jobs as their owner ` +
        `(--run-as-owner); an admin sets one with 'goodput token create --user ${owner} ` +
        `--unix-user ACCOUNT'`,
    );
  }
  const account = lookupAccount(name);
  if (!account)
    throw new GoodputError('E_SPEC', `user ${owner}: Unix account '${name}' does not exist on this machine`);
  if (account.uid === 0)
    throw new GoodputError('E_SPEC', `user ${owner}: jobs never run as root (Unix account '${name}' has uid 0)`);
  const slurm_account = await slurmAccountFor(store, owner);
  return slurm_account !== undefined ? { ...account, slurm_account } : account;
}

/** Whether `account` may enter `dir` (checked by a process running as that account). */
export function canEnter(account: RunAs, dir: string): boolean {
  return (
    spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'goodput-check', dir], {
      uid: account.uid,
      gid: account.gid,
      stdio: 'ignore',
    }).status === 0
  );
}
