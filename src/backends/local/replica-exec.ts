/** What a local replica runs: its argv and environment, and the check of its working directory. */
import { existsSync, statSync } from 'node:fs';
import type { LaunchRequest } from '../backend.js';
import { execPlan } from '../job-env.js';
import type { jobDirs } from '../run-files.js';
import { asOwner } from './run-as.js';

/** The server's environment minus what the contract sets per replica. */
function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('GOODPUT_') || k === 'CUDA_VISIBLE_DEVICES') continue;
    env[k] = v;
  }
  return env;
}

/**
 * The argv and variables of one replica: the job's environment (venv/conda/env_setup) around its
 * command, and the contract's variables. As another owner, the job's own variables (PATH of a
 * venv included) travel hidden through the root wrapper (`asOwner`), and env_setup keeps its
 * markers in the owner's checkpoint directory, the one job directory the owner may write.
 */
export function replicaExec(
  req: LaunchRequest,
  dirs: ReturnType<typeof jobDirs>,
  contract: Readonly<Record<string, string>>,
): { command: string[]; env: Record<string, string> } {
  const environment = req.environment ?? {};
  if (!req.run_as)
    return execPlan(
      environment,
      req.command,
      { ...inheritedEnv(), ...req.env, ...contract },
      { state_dir: dirs.run, attempt: req.attempt },
    );
  const plan = execPlan(environment, req.command, req.env, { state_dir: dirs.checkpoint, attempt: req.attempt });
  const owned = asOwner(req.run_as, plan.command, plan.env);
  return { command: owned.argv, env: { ...owned.env, ...contract } };
}

/**
 * What is wrong with a launch's working directory, or undefined. Node reports a missing `cwd` as
 * `spawn /bin/sh ENOENT`, which blames the shell.
 */
export function workdirProblem(workdir: string): string | undefined {
  if (!existsSync(workdir))
    return 'the workdir does not exist on this machine (removed or renamed since the job was submitted?)';
  return statSync(workdir).isDirectory() ? undefined : 'the workdir is not a directory';
}
