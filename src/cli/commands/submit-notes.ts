/**
 * What `goodput submit` tells the user about a job it just submitted, on stderr: how a plain
 * script is run (a gang of -n processes), an -n beyond the cluster for a job that may run
 * smaller, a job written for another launcher (accelerate, mp.spawn, --local_rank), and other
 * jobs of the same name (commands that take a name then ask for the id).
 */
import type { GoodputClient } from '../../client/client.js';
import type { JobSummary } from '../../api/views.js';
import { scriptLaunchOf } from '../../control/plain-script.js';
import { pythonScript } from '../../core/profile-key.js';
import { foreignLauncher } from '../../core/script-launch.js';
import { isTerminal } from '../../store/lifecycle.js';
import type { JobSpec } from '../../store/types.js';

/** Most jobs of the same name the duplicate-name warning lists. */
const SAME_NAME_SHOWN = 20;

/** The notes for `job` (never throws: a note that cannot be computed is left out). */
export async function submitNotes(client: Pick<GoodputClient, 'nodes' | 'listJobsPage'>, job: Pick<JobSummary, 'id' | 'name' | 'spec'>): Promise<string[]> {
  const notes: string[] = [];
  const spec = job.spec;
  const script = pythonScript(spec.command) ?? spec.command[0];
  if (spec.sdk === false && spec.resumable !== true && spec.max_replicas > 1) {
    notes.push(`${script} does not import goodput, so it runs as a plain script: a gang of ${spec.max_replicas} processes started together (RANK 0..${spec.max_replicas - 1}, as torchrun --nproc_per_node ${spec.max_replicas} starts them), queued until ${spec.max_replicas} devices are free and never resized. Pass --resumable if it resumes from its own snapshot, --sdk if it reports through the Goodput SDK.`);
  }
  notes.push(...launchNotes(spec));
  if (spec.sdk === false && spec.resumable !== true && spec.preemptible === true) {
    notes.push(`${script} is --preemptible without a checkpoint the control plane knows of: a preemption restarts it from its beginning.`);
  }
  try {
    const nodes = await client.nodes();
    const total = nodes.reduce((k, n) => k + n.devices.length, 0);
    const unit = nodes[0]?.devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)';
    if (spec.max_replicas > total) notes.push(`warning: -n ${spec.max_replicas} is more than the cluster's ${total} ${unit}; the job gets at most ${total}.`);
  } catch {
    // the note is a courtesy
  }
  try {
    // One filtered page, never the whole history (the server filters by name and state).
    const page = await client.listJobsPage({ name: job.name, state: 'active', limit: SAME_NAME_SHOWN + 1 });
    const same = page.jobs.filter((j) => j.name === job.name && j.id !== job.id && !isTerminal(j.state));
    if (same.length > 0) notes.push(`warning: ${page.next_cursor !== null ? 'at least ' : ''}${same.length} other active job(s) are named '${job.name}' (${same.map((j) => j.id).join(', ')}); commands that take a name will ask for the id (give this one as ${job.id}), or submit with --name to tell them apart.`);
  } catch {
    // the note is a courtesy
  }
  return notes;
}

/**
 * Warnings for a job written for another launcher (core/script-launch.ts): a command through
 * `accelerate launch` or `deepspeed`, a script that starts its own processes (mp.spawn), takes
 * its local rank from `--local_rank` or fixes its rendezvous address or port, for a job of more
 * than one process; and, at any size, a script whose processes meet through a file, which makes
 * every restart of the job hang, one written for AdaptDL, or a `--resumable` one that saves its
 * snapshot in place. For `submit` and `run`; empty when none applies.
 */
export function launchNotes(spec: Pick<JobSpec, 'command' | 'workdir' | 'max_replicas' | 'resumable'>): string[] {
  const notes: string[] = [];
  const launch = scriptLaunchOf(spec);
  const script = pythonScript(spec.command) ?? spec.command[0];
  const file = launch?.file_rendezvous;
  if (file) notes.push(`warning: ${script} meets its other processes through a file (${file.call}, line ${file.line}): the file outlives a process that a stop or a failure ends, and each later attempt that finds it waits out the rendezvous timeout (30 min by default) and fails, so every rescale, preemption or restart of the job would hang. Use init_method="env://" (the default): goodput sets MASTER_ADDR and MASTER_PORT for each attempt (docs/contract.md, "Scripts written for another launcher").`);
  const adaptdl = launch?.adaptdl;
  if (adaptdl) notes.push(`warning: ${script} is written for AdaptDL (it imports adaptdl, line ${adaptdl.line}), which takes its replicas, batch size and checkpoint path from AdaptDL's own scheduler (ADAPTDL_* variables) that goodput does not set: it would run as a plain script, with no batch-size adaptation and no checkpoint goodput knows of. Port it to goodput.torch, mostly a change of imports (docs/migrating-from-adaptdl.md).`);
  const save = spec.resumable === true ? launch?.in_place_save : undefined;
  if (save) notes.push(`warning: ${script} is --resumable but saves its snapshot in place (${save.call}, line ${save.line}, and no os.replace anywhere): a stop's SIGTERM ends it at once, possibly in the middle of the save, and a snapshot cut short fails every later attempt. Save to a temporary file and os.replace() it into place (docs/contract.md, "Resumable scripts").`);
  if (spec.max_replicas <= 1) return notes;
  const set = 'goodput starts one process per device itself, with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT set as torchrun sets them';
  const other = foreignLauncher(spec.command);
  if (other) notes.push(`warning: ${other.launcher} starts processes of its own, on the devices each of the job's ${spec.max_replicas} processes sees, but ${set}. Give goodput the script: -n ${spec.max_replicas} -- ${other.direct.join(' ')} (with your environment's Python); ${other.launcher === 'deepspeed' ? 'DeepSpeed' : 'Accelerate'} reads those variables as under torchrun, and launcher options belong in the script or its config (docs/contract.md, "Scripts written for another launcher").`);
  if (!launch) return notes;
  const { spawn, local_rank_option: option, fixed_rendezvous: fixed } = launch;
  // The command as typed when no word needs quoting inside the single-quoted script, else its start.
  const shown = spec.command.every((w) => /^[\w@%+=:,./-]+$/.test(w)) ? spec.command.join(' ') : `${spec.command.slice(0, 2).join(' ')} ...`;
  if (spawn) notes.push(`warning: ${script} starts its own processes (${spawn.call}, line ${spawn.line}), but ${set}: with -n ${spec.max_replicas} each of its processes would start a group of its own. Call the function ${spawn.call} starts once, with the rank from RANK and the world size from WORLD_SIZE, and leave MASTER_ADDR/MASTER_PORT to goodput (docs/contract.md, "Scripts written for another launcher"), or use -n 1.`);
  if (option) notes.push(`warning: ${script} takes its local rank from ${option.call} (line ${option.line}), as torch.distributed.launch passed it, and never reads LOCAL_RANK, but ${set}, and passes no option: each of its ${spec.max_replicas} processes would get the option's default. Default the option to int(os.environ.get("LOCAL_RANK", -1)) (docs/contract.md, "Scripts written for another launcher"), or pass it per process through a shell: --no-sdk -- sh -c 'exec ${shown} ${option.call} "$LOCAL_RANK"'.`);
  // The spawn warning already says to leave the rendezvous to goodput.
  if (fixed && !spawn) notes.push(`warning: ${script} fixes its rendezvous (${fixed.call}, line ${fixed.line}), but goodput gives each attempt rank 0's node as MASTER_ADDR and a free port as MASTER_PORT: two jobs of it on one node would bind the same port (the second fails with "Address already in use"), and on several nodes a fixed address leaves the other nodes' ranks waiting out the rendezvous timeout. Use os.environ.setdefault(...) instead of the assignment, or init_method="env://" (the default) (docs/contract.md, "Scripts written for another launcher").`);
  return notes;
}
