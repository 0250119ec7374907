/**
 * Slurm's states as data (pure): which `sbatch` refusals come from the state of the cluster (a
 * drained or down partition, nodes not available: the job waits and is submitted again) rather
 * than from the job itself (account, QOS, limits, options: the job fails); a PENDING job's reason
 * in words; and what of a job spec an attempt's batch job cannot carry (refused at submit).
 */
import type { SpecToCarry } from '../backend.js';

/**
 * Slurm's messages (slurm_errno.c, 22.05 and later) for a submission refused because of the
 * partition's or the nodes' state now, not because of the job: "Required partition not
 * available (inactive or drain)", "Required node not available (down, drained or reserved)",
 * "Requested nodes are busy", "Requested partition configuration not available now", a
 * reservation not usable now, "Unable to create job record, try again". "Requested node
 * configuration is not available" (more GPUs than a node has) is the job's own fault.
 */
const STATE_REFUSAL =
  /partition not available|inactive or drain|required node not available|down, drained or reserved|nodes are busy|partition configuration not available now|reservation (?:is busy|not usable|not available)|try again|temporarily unavailable/i;

/** Whether an sbatch error message says the cluster's state (not the job) refused the submission. */
export function isStateRefusal(message: string): boolean {
  return STATE_REFUSAL.test(message);
}

/** Slurm's own words after `sbatch: error:` (the last line), without the command line before them. */
export function slurmWords(message: string): string {
  const m = /(?:sbatch: error: )(?:Batch job submission failed: )?(.*)$/.exec(message);
  return (m?.[1] ?? message).trim();
}

/** sinfo's availability (`%a`) of a partition that accepts no new jobs, in words. */
const NOT_ACCEPTING: Readonly<Record<string, string>> = {
  drain: 'is draining (State=DRAIN: it accepts no new jobs; running ones go on)',
  down: 'is down (State=DOWN: new jobs stay PENDING until it is up)',
  inact: 'is inactive (State=INACTIVE: it accepts no new jobs)',
};

/**
 * Why the partition jobs go to accepts no new jobs, from `sinfo -h -o '%P|%a'` (one `name|avail`
 * line per partition, the default one marked `*`), or undefined when it is up or not listed.
 * `partition`: the backend's --partition; absent, Slurm's default partition.
 */
export function partitionRefusal(sinfo: string, partition?: string): string | undefined {
  for (const line of sinfo.split('\n')) {
    const [name = '', avail = ''] = line.trim().split('|');
    const isDefault = name.endsWith('*');
    const bare = isDefault ? name.slice(0, -1) : name;
    if (partition !== undefined ? bare !== partition : !isDefault) continue;
    const words = NOT_ACCEPTING[avail.trim().toLowerCase()];
    return words === undefined ? undefined : `Slurm partition ${bare} ${words}`;
  }
  return undefined;
}

/** What some of Slurm's pending reasons mean (squeue's REASON column), for a job's events. */
const PENDING_MEANINGS: Readonly<Record<string, string>> = {
  PartitionDown: 'the partition is down; Slurm starts it once an administrator sets the partition up',
  PartitionInactive: 'the partition is inactive',
  ReqNodeNotAvail: 'a node it needs is down, drained or reserved',
  Resources: 'waiting for its GPUs to be released',
  Priority: 'jobs of higher priority go first',
  Reservation: 'waiting for its advanced reservation',
  JobHeldAdmin: 'held by an administrator (scontrol release)',
  JobHeldUser: 'held (scontrol release)',
  BeginTime: 'its start time is in the future',
};

/**
 * A PENDING Slurm job in words: `Slurm job 12 is PENDING (PartitionDown: the partition is down ...)`.
 * `reason` is squeue's state reason ('' or 'None' while Slurm has not looked at the job yet).
 */
export function pendingWords(id: string, reason: string): string {
  const code = reason.split(',')[0]!.trim();
  if (!code || code === 'None') return `Slurm job ${id} is PENDING (submitted, not started yet)`;
  const meaning = PENDING_MEANINGS[code];
  return `Slurm job ${id} is PENDING (${reason}${meaning ? `: ${meaning}` : ''})`;
}

/**
 * Environment variables the job may not set on the Slurm backend: sbatch and srun read their
 * options from SBATCH_*, SALLOC_*, SRUN_* and SLURM_* variables (SBATCH_PARTITION, SLURM_NTASKS
 * ...), so such a variable would change the partition, layout or binding Goodput chose for every
 * attempt instead of reaching the program.
 */
const SLURM_INPUT_ENV = /^(SBATCH|SALLOC|SRUN|SLURM)_/;

/**
 * Why an attempt's batch job cannot carry the spec as given, or undefined. The workdir and argv
 * travel as arguments of the task wrapper, which carry any byte the spec schema allows (it
 * refuses NUL); the environment goes through sbatch's own export, where a variable may not be
 * one of Slurm's inputs.
 */
export function slurmSpecRefusal(spec: SpecToCarry): string | undefined {
  const names = Object.keys(spec.env).filter((k) => SLURM_INPUT_ENV.test(k));
  if (names.length === 0) return undefined;
  return (
    `env: ${names.join(', ')}: on the Slurm backend sbatch and srun read SBATCH_*, SALLOC_*, ` +
    `SRUN_* and SLURM_* variables as their own options, which would change the partition, ` +
    `layout or binding Goodput chose for the job; remove ${names.length > 1 ? 'them' : 'it'} ` +
    `(Slurm options every job needs are the administrator's: goodput up ` +
    `--partition/--account/--qos)`
  );
}
