/**
 * Plain scripts (jobs that do not report through the Goodput SDK) and how they are run
 * (docs/contract.md, "Plain scripts"): as torchrun runs them, `-n N` is N processes started
 * together (a gang), queued until N devices are free and never resized, unless the spec says the
 * script resumes from its own snapshot (`resumable`). Whether a job uses the SDK is decided at
 * submit (`sdkOf`) when the spec does not say, and a job that reports is an SDK job whatever its
 * spec says.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { pythonScript } from '../core/profile-key.js';
import { scriptLaunch, type ScriptLaunch } from '../core/script-launch.js';
import { GoodputError } from '../core/errors.js';
import { profileKeyOf } from '../core/profile-key.js';
import type { DeviceInfo } from '../backends/backend.js';
import type { JobSpec } from '../store/types.js';

/** An import of the SDK at the start of a line (`import goodput`, `from goodput.x import y`). */
const SDK_IMPORT = /^[ \t]*(import[ \t]+goodput\b|from[ \t]+goodput[ \t.])/m;

/** Scripts larger than this are not read (they are treated as not importing the SDK). */
const MAX_SCRIPT_BYTES = 4 << 20;

/** Where the job's Python script is on this machine, or undefined when it runs none (`python -m`, a binary). */
export function scriptPath(spec: Pick<JobSpec, 'command' | 'workdir'>): string | undefined {
  const script = pythonScript(spec.command);
  if (script === undefined) return undefined;
  return isAbsolute(script) ? script : join(spec.workdir, script);
}

/**
 * Whether a spec's job uses the SDK, when the spec does not say: a Python script readable here
 * that imports `goodput` does, one that does not is plain; undefined for anything else (no
 * Python script, or one this machine cannot read): such a job keeps the SDK's elastic handling.
 */
export function sdkOf(spec: Pick<JobSpec, 'command' | 'workdir' | 'sdk'>): boolean | undefined {
  if (spec.sdk !== undefined) return spec.sdk;
  const text = scriptText(spec);
  return typeof text === 'string' ? SDK_IMPORT.test(text) : text === 'too-large' ? false : undefined;
}

/** The job's Python script's text; 'too-large' past MAX_SCRIPT_BYTES; undefined without a script readable here. */
function scriptText(spec: Pick<JobSpec, 'command' | 'workdir'>): string | 'too-large' | undefined {
  const path = scriptPath(spec);
  if (path === undefined) return undefined;
  try {
    return statSync(path).size > MAX_SCRIPT_BYTES ? 'too-large' : readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * What in the job's script conflicts with how goodput launches it (core/script-launch.ts);
 * undefined when it is not readable here.
 */
export function scriptLaunchOf(spec: Pick<JobSpec, 'command' | 'workdir'>): ScriptLaunch | undefined {
  const text = scriptText(spec);
  return typeof text === 'string' ? scriptLaunch(text) : undefined;
}

/**
 * The spec as stored at submit: its profile key and whether it uses the SDK filled in. Throws
 * E_INFEASIBLE for a job that could never run on `devices`: more than all of them as its
 * minimum, or a plain script's gang larger than the cluster.
 */
export function specToStore(spec: JobSpec, devices: readonly DeviceInfo[]): JobSpec {
  const kind = devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)';
  if (spec.min_replicas > devices.length) {
    throw new GoodputError('E_INFEASIBLE', `job needs at least ${spec.min_replicas} replicas (min_replicas) but this cluster has ${devices.length} ${kind}; submit it with --min-replicas ${devices.length} or less`);
  }
  const sdk = sdkOf(spec);
  if (sdk === false && spec.resumable !== true && spec.max_replicas > devices.length) {
    throw new GoodputError('E_INFEASIBLE', `a plain script (it does not import goodput) runs as a gang of -n ${spec.max_replicas} processes started together, but this cluster has ${devices.length} ${kind}; submit it with -n ${devices.length} or less (or --resumable if it resumes from its own snapshot at any size, --sdk if it reports through the Goodput SDK)`);
  }
  return { ...spec, profile: profileKeyOf(spec), ...(sdk !== undefined ? { sdk } : {}) };
}
