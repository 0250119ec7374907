/**
 * What would make a launch fail, checked at submit so that the error names the field: the
 * workdir must be a directory on the server, the Python script the command runs must exist
 * there (E_NO_SCRIPT; spec `check_script: false` skips this for scripts that exist only on the
 * compute nodes) and, in multi-user mode, the owner must have a Unix
 * account (not root) that can enter it; the command must not start its ranks through torchrun
 * (torch-launcher.ts). (Sizes and NUL bytes are checked by the spec schema.)
 */
import { existsSync, statSync } from 'node:fs';
import { GoodputError } from '../core/errors.js';
import { pythonScript } from '../core/profile-key.js';
import { unwrapTorchLauncher } from './torch-launcher.js';
import { scriptPath } from './script-source.js';
import { canEnter, ownerAccount } from '../multiuser/accounts.js';
import type { Store } from '../store/store.js';
import type { JobSpec } from '../store/types.js';
import type { RunAs } from '../backends/backend.js';

const PYTHON_PLACEHOLDER = '\u0000python';

/** Throws E_SPEC naming the field when `spec`, owned by `owner`, could not be launched. */
export async function checkLaunchable(
  store: Store,
  spec: JobSpec,
  owner: string,
  run_as_owner: boolean,
  check_owner?: (account: RunAs, owner: string) => Promise<void>,
): Promise<void> {
  if (!existsSync(spec.workdir) || !statSync(spec.workdir).isDirectory()) {
    throw new GoodputError('E_SPEC', `job spec is invalid: workdir: ${spec.workdir} is not a directory on the server`);
  }
  // The server does not guess the Python of the user's torchrun: the example names it PYTHON.
  const launcher = unwrapTorchLauncher(spec.command, PYTHON_PLACEHOLDER);
  if (launcher.kind !== 'plain') {
    const words =
      launcher.kind === 'unwrapped'
        ? launcher.command.map((a) => (a === PYTHON_PLACEHOLDER ? 'PYTHON' : JSON.stringify(a)))
        : [];
    const direct =
      launcher.kind === 'unwrapped'
        ? `, e.g. [${words.join(', ')}]${launcher.ranks !== undefined ? ` with max_replicas ${launcher.ranks}` : ''}`
        : '';
    throw new GoodputError(
      'E_SPEC',
      `job spec is invalid: command: it starts its ranks through ${spec.command[0]}; the control ` +
        `plane starts one process per rank itself, with torchrun's variables (docs/contract.md), ` +
        `and a launcher inside a replica would start ranks of its own on the replica's devices, ` +
        `with a rendezvous of its own: give the script's own command${direct} (goodput submit and ` +
        `goodput run rewrite a torchrun command this way)`,
    );
  }
  const script = spec.check_script === false ? undefined : scriptPath(spec);
  if (script !== undefined && !existsSync(script)) {
    throw new GoodputError(
      'E_NO_SCRIPT',
      `the job's script ${script} does not exist (its command runs ${pythonScript(spec.command)} ` +
        `in the workdir ${spec.workdir}): check the path and --workdir; if the script exists only ` +
        `where the replicas run (a file system this server does not see), submit with ` +
        `--no-script-check`,
    );
  }
  if (!run_as_owner) return;
  const account = await ownerAccount(store, owner);
  if (!canEnter(account, spec.workdir)) {
    throw new GoodputError(
      'E_SPEC',
      `job spec is invalid: workdir: Unix account '${account.user}' cannot enter ${spec.workdir}`,
    );
  }
  // The backend's word on the account (Slurm: would it take a job of this user and Slurm account).
  await check_owner?.(account, owner);
}
