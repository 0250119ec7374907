/**
 * What would make a launch fail, checked at submit so that the error names the field: the
 * workdir must be a directory on the server and, in multi-user mode, the owner must have a Unix
 * account (not root) that can enter it. (Sizes and NUL bytes are checked by the spec schema.)
 */
import { existsSync, statSync } from 'node:fs';
import { GoodputError } from '../core/errors.js';
import { canEnter, ownerAccount } from '../multiuser/accounts.js';
import type { Store } from '../store/store.js';
import type { JobSpec } from '../store/types.js';

/** Throws E_SPEC naming the field when `spec`, owned by `owner`, could not be launched. */
export async function checkLaunchable(store: Store, spec: JobSpec, owner: string, run_as_owner: boolean): Promise<void> {
  if (!existsSync(spec.workdir) || !statSync(spec.workdir).isDirectory()) {
    throw new GoodputError('E_SPEC', `job spec is invalid: workdir: ${spec.workdir} is not a directory on the server`);
  }
  if (!run_as_owner) return;
  const account = await ownerAccount(store, owner);
  if (!canEnter(account, spec.workdir)) {
    throw new GoodputError('E_SPEC', `job spec is invalid: workdir: Unix account '${account.user}' cannot enter ${spec.workdir}`);
  }
}
