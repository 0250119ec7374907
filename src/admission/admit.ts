/**
 * Admission in one place: what a submitted command is (an SDK job, a plain gang, a resumable
 * plain script, an AdaptDL-style script, one written for another launcher), decided from ONE read
 * of its code (script-source.ts: the script and its local imports), and the notes the user is
 * told about it, carried by the server's answer to the submit (docs/contract.md, "Plain scripts";
 * "Scripts written for another launcher"). A torchrun command was rewritten before it gets here
 * (torch-launcher.ts; submit-checks.ts refuses one that was not).
 */
import { GoodputError } from '../core/errors.js';
import { profileKeyOf, pythonScript } from '../core/profile-key.js';
import type { DeviceInfo } from '../backends/backend.js';
import type { JobSpec } from '../store/types.js';
import { interpreterNote } from './interpreter.js';
import { launchNotes, planNotes } from './notes.js';
import { scriptLaunch, type ScriptLaunch } from './script-launch.js';
import { readJobSource, type JobSource } from './script-source.js';

/** What admission read and decided about one spec. */
export interface JobCode {
  /** The job's code as read here; undefined without a Python script readable on this machine. */
  source: JobSource | undefined;
  /** What in it conflicts with goodput's launch; undefined when nothing was read. */
  launch: ScriptLaunch | undefined;
}

/** The arguments the command passes its Python script (they override its argparse defaults). */
export function scriptArgs(command: readonly string[]): string[] {
  const script = pythonScript(command);
  const at = script === undefined ? -1 : command.indexOf(script);
  return at === -1 ? [] : command.slice(at + 1);
}

/** Reads the job's code once (see the module's comment). */
export function readJobCode(spec: Pick<JobSpec, 'command' | 'workdir'>): JobCode {
  const source = readJobSource(spec);
  const launch =
    source === undefined || source.too_large ? undefined : scriptLaunch(source.files, scriptArgs(spec.command));
  return { source, launch };
}

/**
 * Whether a spec's job uses the SDK, when the spec does not say: a Python script readable here
 * that (or a local module of which) imports `goodput` does, one that does not is plain; undefined
 * for anything else (no Python script, or one this machine cannot read): such a job keeps the
 * SDK's elastic handling.
 */
export function sdkOf(
  spec: Pick<JobSpec, 'command' | 'workdir' | 'sdk'>,
  code: JobCode = readJobCode(spec),
): boolean | undefined {
  if (spec.sdk !== undefined) return spec.sdk;
  if (code.source?.too_large) return false;
  return code.launch === undefined ? undefined : code.launch.sdk !== undefined;
}

/** A submitted spec as stored, with what the user is told about it. */
export interface Admission {
  spec: JobSpec;
  /** Lines for the user (warnings start with `warning: `); the CLI prints them on stderr. */
  notes: string[];
  /** What was read of the job's code (the one read). */
  code: JobCode;
}

/**
 * The spec as stored at submit: its profile key and whether it uses the SDK filled in, and the
 * notes about it. Throws E_INFEASIBLE for a job that could never run on `devices`: more than all
 * of them as its minimum, or a plain script's gang larger than the cluster.
 */
export function admit(spec: JobSpec, devices: readonly DeviceInfo[]): Admission {
  const kind = devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)';
  if (spec.min_replicas > devices.length) {
    throw new GoodputError(
      'E_INFEASIBLE',
      `job needs at least ${spec.min_replicas} replicas (min_replicas) but this cluster has ` +
        `${devices.length} ${kind}; submit it with --min-replicas ${devices.length} or less`,
    );
  }
  const code = readJobCode(spec);
  const sdk = sdkOf(spec, code);
  if (sdk === false && spec.resumable !== true && spec.max_replicas > devices.length) {
    throw new GoodputError(
      'E_INFEASIBLE',
      `a plain script (it does not import goodput) runs as a gang of -n ${spec.max_replicas} ` +
        `processes started together, but this cluster has ${devices.length} ${kind}; submit it ` +
        `with -n ${devices.length} or less (or --resumable if it resumes from its own snapshot at ` +
        `any size, --sdk if it reports through the Goodput SDK)`,
    );
  }
  const stored: JobSpec = { ...spec, profile: profileKeyOf(spec), ...(sdk !== undefined ? { sdk } : {}) };
  return { spec: stored, notes: [...planNotes(stored, devices), ...launchNotes(stored, code.launch)], code };
}

/**
 * The admission of a submit: `admit`, and where the backend runs replicas on this machine with
 * PATH `replica_path` (`Backend.replicaPath`), the check of the interpreter they would run
 * (interpreter.ts) on the same read of the script. A probe that cannot tell adds nothing.
 */
export async function admitJob(
  spec: JobSpec,
  devices: readonly DeviceInfo[],
  replica_path: string | undefined,
): Promise<Admission> {
  const admission = admit(spec, devices);
  if (replica_path === undefined) return admission;
  const note = await interpreterNote(admission.spec, admission.code.source, replica_path);
  return note === undefined ? admission : { ...admission, notes: [...admission.notes, note] };
}

/** specToStore of earlier versions: the stored spec alone. */
export function specToStore(spec: JobSpec, devices: readonly DeviceInfo[]): JobSpec {
  return admit(spec, devices).spec;
}
