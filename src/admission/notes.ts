/**
 * What the user is told about a job at submit (the server's answer carries these lines; `goodput
 * submit` and `goodput run` print them on stderr): how a plain script is run (a gang of -n
 * processes), an -n beyond the cluster, a job written for another launcher (accelerate,
 * mp.spawn, --local_rank, a fixed rendezvous, ranks or devices), N copies of a script with no
 * distributed code, and other active jobs of the same name. Pure: admit.ts read the code.
 */
import type { DeviceInfo } from '../backends/backend.js';
import { pythonScript } from '../core/profile-key.js';
import type { JobSpec } from '../store/types.js';
import { foreignLauncher, where, type ScriptLaunch } from './script-launch.js';

/**
 * Notes on how the job is run on `devices`: a plain script's gang, a plain --preemptible script
 * (a preemption restarts it from its beginning), and an -n beyond the cluster.
 */
export function planNotes(
  spec: Pick<JobSpec, 'command' | 'sdk' | 'resumable' | 'max_replicas' | 'preemptible'>,
  devices: readonly DeviceInfo[],
): string[] {
  const notes: string[] = [];
  const script = pythonScript(spec.command) ?? spec.command[0];
  if (spec.sdk === false && spec.resumable !== true && spec.max_replicas > 1) {
    notes.push(
      `${script} does not import goodput, so it runs as a plain script: a gang of ` +
        `${spec.max_replicas} processes started together (RANK 0..${spec.max_replicas - 1}, as ` +
        `torchrun --nproc_per_node ${spec.max_replicas} starts them), queued until ` +
        `${spec.max_replicas} devices are free and never resized. Pass --resumable if it resumes ` +
        `from its own snapshot, --sdk if it reports through the Goodput SDK.`,
    );
  }
  if (spec.sdk === false && spec.resumable !== true && spec.preemptible === true) {
    notes.push(
      `${script} is --preemptible without a checkpoint the control plane knows of: a preemption restarts it from its beginning.`,
    );
  }
  const unit = devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)';
  if (spec.max_replicas > devices.length)
    notes.push(
      `warning: -n ${spec.max_replicas} is more than the cluster's ${devices.length} ${unit}; the job gets at most ${devices.length}.`,
    );
  return notes;
}

/**
 * The note for a job whose default profile key names its script's folder (`imagenet.main`) where
 * earlier versions named the script alone (`legacy`, `main`) and a profile under the old key
 * exists: it is not used, since it may be another project's `main.py`.
 */
export function renamedKeyNote(key: string, legacy: string): string {
  return (
    `profile key '${key}': a generic script name takes its folder, so that different projects' ` +
    `scripts of one name do not share a profile; the profile measured under '${legacy}' ` +
    `(before keys named the folder) is not used. If it is this model's, submit with --profile ` +
    `${legacy}.`
  );
}

/** The note for other active jobs of the job's name (commands that take a name then ask for the id); undefined when none. */
export function sameNameNote(job: { id: string; name: string }, others: readonly { id: string }[]): string | undefined {
  if (others.length === 0) return undefined;
  return (
    `warning: ${others.length} other active job(s) are named '${job.name}' (` +
    `${others.map((j) => j.id).join(', ')}); commands that take a name will ask for the id ` +
    `(give this one as ${job.id}), or submit with --name to tell them apart.`
  );
}

/**
 * Warnings for a job written for another launcher (script-launch.ts): a command through
 * `accelerate launch` or `deepspeed`, a script that starts its own processes (mp.spawn), takes
 * its local rank from `--local_rank` or fixes its rendezvous address or port, for a job of more
 * than one process; and, at any size, a script whose processes meet through a file, which makes
 * every restart of the job hang, one written for AdaptDL, or a `--resumable` one that saves its
 * snapshot in place. For `submit` and `run`; empty when none applies.
 */
export function launchNotes(
  spec: Pick<JobSpec, 'command' | 'max_replicas' | 'resumable'>,
  launch: ScriptLaunch | undefined,
): string[] {
  const notes: string[] = [];
  const script = pythonScript(spec.command) ?? spec.command[0];
  const file = launch?.file_rendezvous;
  if (file)
    notes.push(
      `warning: ${script} meets its other processes through a file (${file.call}, ${where(file)}` +
        `): the file outlives a process that a stop or a failure ends, and each later attempt that ` +
        `finds it waits out the rendezvous timeout (30 min by default) and fails, so every ` +
        `rescale, preemption or restart of the job would hang. Use init_method="env://" (the ` +
        `default): goodput sets MASTER_ADDR and MASTER_PORT for each attempt (docs/contract.md, ` +
        `"Scripts written for another launcher").`,
    );
  const adaptdl = launch?.adaptdl;
  if (adaptdl)
    notes.push(
      `warning: ${script} is written for AdaptDL (it imports adaptdl, ${where(adaptdl)}), which ` +
        `takes its replicas, batch size and checkpoint path from AdaptDL's own scheduler ` +
        `(ADAPTDL_* variables) that goodput does not set: it would run as a plain script, with no ` +
        `batch-size adaptation and no checkpoint goodput knows of. Port it to goodput.torch, ` +
        `mostly a change of imports (docs/migrating-from-adaptdl.md).`,
    );
  const save = spec.resumable === true ? launch?.in_place_save : undefined;
  const devices = launch?.fixed_devices;
  if (devices)
    notes.push(
      `warning: ${script} fixes the devices it sees (${devices.call}, ${where(devices)}), but ` +
        `goodput gives each process the devices the policy placed it on (CUDA_VISIBLE_DEVICES, ` +
        `entry LOCAL_RANK its own): the assignment replaces them, so its processes (and other ` +
        `jobs) would train on the same GPU. Remove it and pick the device with ` +
        `torch.cuda.set_device(int(os.environ["LOCAL_RANK"])), or keep it under if ` +
        `"CUDA_VISIBLE_DEVICES" not in os.environ: for runs without goodput (docs/contract.md, ` +
        `"Scripts written for another launcher").`,
    );
  if (save)
    notes.push(
      `warning: ${script} is --resumable but saves its snapshot in place (${save.call}, ` +
        `${where(save)}, and no os.replace anywhere in the job's code): a stop's SIGTERM ends it ` +
        `at once, possibly in the middle of the save, and a snapshot cut short fails every later ` +
        `attempt. Save to a temporary file and os.replace() it into place (docs/contract.md, ` +
        `"Resumable scripts").`,
    );
  if (spec.max_replicas <= 1) return notes;
  const set =
    'goodput starts one process per device itself, with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT set as torchrun sets them';
  const other = foreignLauncher(spec.command);
  if (other)
    notes.push(
      `warning: ${other.launcher} starts processes of its own, on the devices each of the job's ` +
        `${spec.max_replicas} processes sees, but ${set}. Give goodput the script: -n ` +
        `${spec.max_replicas} -- ${other.direct.join(' ')} (with your environment's Python); ` +
        `${other.launcher === 'deepspeed' ? 'DeepSpeed' : 'Accelerate'} reads those variables as ` +
        `under torchrun, and launcher options belong in the script or its config ` +
        `(docs/contract.md, "Scripts written for another launcher").`,
    );
  if (!launch) return notes;
  const { spawn, local_rank_option: option, fixed_rendezvous: fixed } = launch;
  // The command as typed when no word needs quoting inside the single-quoted script, else its start.
  const shown = spec.command.every((w) => /^[\w@%+=:,./-]+$/.test(w))
    ? spec.command.join(' ')
    : `${spec.command.slice(0, 2).join(' ')} ...`;
  if (spawn)
    notes.push(
      `warning: ${script} starts its own processes (${spawn.call}, ${where(spawn)}), but ${set}: ` +
        `with -n ${spec.max_replicas} each of its processes would start a group of its own. Call ` +
        `the function ${spawn.call} starts once, with the rank from RANK and the world size from ` +
        `WORLD_SIZE, and leave MASTER_ADDR/MASTER_PORT to goodput (docs/contract.md, "Scripts ` +
        `written for another launcher"), or use -n 1.`,
    );
  if (option)
    notes.push(
      `warning: ${script} takes its local rank from ${option.call} (${where(option)}), as ` +
        `torch.distributed.launch passed it, and never reads LOCAL_RANK, but ${set}, and passes no ` +
        `option: each of its ${spec.max_replicas} processes would get the option's default. ` +
        `Default the option to int(os.environ.get("LOCAL_RANK", -1)) (docs/contract.md, "Scripts ` +
        `written for another launcher"), or pass it per process through a shell: --no-sdk -- sh -c ` +
        `'exec ${shown} ${option.call} "$LOCAL_RANK"'.`,
    );
  const ranks = launch.fixed_ranks;
  if (ranks) {
    const url = ranks.env_url !== undefined ? ` and pass ${ranks.env_url} env://` : '';
    notes.push(
      `warning: ${script} is given its rank and world size on the command line (${ranks.call}), ` +
        `so each of its ${spec.max_replicas} processes would be the same rank (rank 0 of a world ` +
        `of 1 for --world-size 1 --rank 0) and none would meet the others; a failure there is not ` +
        `a port collision. Drop ${ranks.drop.join(' and ')}${url}: the script then reads RANK and ` +
        `WORLD_SIZE, which goodput sets for each process (docs/contract.md, "Scripts written for ` +
        `another launcher").`,
    );
  }
  if (!launch.distributed && !spawn && !other) {
    notes.push(
      `warning: ${script} has no distributed code (no torch.distributed, init_process_group, ` +
        `DistributedDataParallel, Accelerate or Goodput SDK in it or the local modules it ` +
        `imports), so -n ${spec.max_replicas} runs ${spec.max_replicas} identical copies that each ` +
        `train the whole model alone and write the same files (e.g. the same model.pt). Use -n 1, ` +
        `or make it distributed (DistributedDataParallel with init_process_group("env://"), or the ` +
        `Goodput SDK: docs/sdk.md).`,
    );
  }
  // The spawn warning already says to leave the rendezvous to goodput; the ranks warning says to
  // pass the rendezvous option env:// (a script without one keeps this warning).
  if (fixed && !spawn && !(ranks && (fixed.line === 0 || ranks.env_url !== undefined)))
    notes.push(
      `warning: ${script} fixes its rendezvous (${fixed.call}, ${where(fixed)}), but goodput ` +
        `gives each attempt rank 0's node as MASTER_ADDR and a free port as MASTER_PORT: two jobs ` +
        `of it on one node would bind the same port (the second fails with "Address already in ` +
        `use"), and on several nodes a fixed address leaves the other nodes' ranks waiting out the ` +
        `rendezvous timeout. Use os.environ.setdefault(...) instead of the assignment, or ` +
        `init_method="env://" (the default) (docs/contract.md, "Scripts written for another ` +
        `launcher").`,
    );
  return notes;
}
