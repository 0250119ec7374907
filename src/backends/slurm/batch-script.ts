/**
 * The batch script of one attempt: one Slurm job on exactly the chosen nodes, one task per GPU.
 * Pure (text in, text out). Even layouts (the same GPU count on every node) are one plain job;
 * uneven ones are a heterogeneous job with one component per node, since a plain job cannot
 * ask for different GPU counts per node.
 */
import { GoodputError } from '../../core/errors.js';
import { replicaLogName } from '../run-files.js';
import { PICK_RANK_ENV } from '../contract-env.js';

/** GPUs (= tasks) per node, in rank order: the first entry holds ranks 0..count-1. */
export interface NodeShare {
  node: string;
  count: number;
}

/** What the script needs. */
export interface BatchScriptInput {
  job_name: string;
  shares: readonly NodeShare[];
  /** Directory of the wrapper's run files (.pid, .exit) and Slurm's own output. */
  run_dir: string;
  logs_dir: string;
  attempt: number;
  workdir: string;
  command: readonly string[];
  partition?: string;
  account?: string;
  qos?: string;
  /**
   * GRES type the job's GPUs must have (`--gres=gpu:TYPE:N`): set when a chosen node has
   * GPUs of several types, so that Slurm gives the job the type Goodput chose.
   */
  gpu_type?: string;
}

/**
 * The signal a stop sends through `scancel --signal` (SIGWINCH, by number: scancel knows no name
 * for it): Slurm signals every process of the step's tasks, and only the task wrapper acts on
 * this one (the default action is to ignore it), so SIGTERM reaches the program's main process
 * alone, as on the local backend.
 */
export const STOP_SIGNAL = '28';

/**
 * Shell text run by the task wrapper once its program ended: SIGKILLs every process on the node
 * that still carries the rank's `GOODPUT_JOB_ID`, `GOODPUT_ATTEMPT` and `RANK` in its environment
 * (/proc/PID/environ), as the local backend's containment.ts does. Slurm ends a step's processes
 * only as far as its process tracking follows them: proctrack/pgid (a common default and the test
 * cluster's) loses a `setsid` child, and proctrack/linuxproc one re-parented to init; such a
 * child would otherwise outlive its job with the job's environment (and its GPU). One `grep` over
 * every process narrows to the job's; the wrapper itself is skipped. Two passes: a job cancel's
 * SIGTERM reaches every process of the task's group, the sweep's own `grep`s too, and one that
 * lands during a pass (the wrapper killed the program first, for a SIGKILL asked through
 * ASK_FACTS) cuts its list short; Slurm sends that SIGTERM once, so the second pass reads it whole.
 */
export const SWEEP_MARKED = [
  'for pass in 1 2; do',
  '  for f in $(grep -lzxF "GOODPUT_JOB_ID=$GOODPUT_JOB_ID" /proc/[0-9]*/environ 2>/dev/null); do',
  '    q=${f#/proc/}; q=${q%/environ}',
  '    [ "$q" != $$ ] && grep -qzxF "GOODPUT_ATTEMPT=$GOODPUT_ATTEMPT" "$f" 2>/dev/null && ' +
    'grep -qzxF "RANK=$RANK" "$f" 2>/dev/null && kill -KILL "$q" 2>/dev/null',
  '  done',
  'done',
].join('\n');

/**
 * The signal that asks every task of an attempt for its program's facts (`scancel --signal=23`,
 * SIGURG, by number): like STOP_SIGNAL, every process of the step gets it and ignores it by
 * default (a plain job's program too), and only the task wrapper acts on it (ASK_FACTS).
 */
export const ASK_SIGNAL = '23';

/**
 * Shell text of the task wrapper's ASK_SIGNAL trap, run on the rank's node (the server may run
 * elsewhere and cannot read that node's /proc): copies /proc/PID/stat of the program's main
 * process to `$p.facts` (state, CPU time), then, only when the server left a `$p.stacks` marker (an
 * SDK job the hang verdict named), forwards SIGUSR1 to the program, which the SDK turns into a
 * faulthandler dump of its Python stacks; a plain program never gets SIGUSR1 (its default action
 * would end it). The wrapper is a shell waiting on its child, so it answers even when the program
 * is stopped (SIGSTOP) or wedged, whose state then reads `T` or `D`. A `$p.kill` marker (a
 * SIGKILL from the server, ask-facts.ts) makes it SIGKILL the program at once; the wrapper then
 * records the exit as for any other end.
 */
export const ASK_FACTS = [
  'ask() { [ -n "$c" ] || return 0',
  '  cat "/proc/$c/stat" > "$p.facts.tmp" 2>/dev/null && mv -f "$p.facts.tmp" "$p.facts"',
  '  [ -e "$p.kill" ] && kill -KILL "$c" 2>/dev/null',
  '  [ -e "$p.stacks" ] && rm -f "$p.stacks" && kill -USR1 "$c" 2>/dev/null; return 0; }',
].join('\n');

/** Exit status of a rank whose node cannot enter the job's workdir (its program never started). */
export const WORKDIR_EXIT = 1;

/**
 * Runs in every task. Arguments are positional (never parsed by a shell): run dir, logs dir,
 * workdir, argv. It picks the contract's per-rank variables (contract-env.ts) by Slurm's task
 * rank, appends its output to the rank's log, enters the workdir (or records WORKDIR_EXIT with
 * the reason in the rank's log: the program never starts elsewhere), records `<node> <pid>` in
 * `.pid` once the program started, and writes its exit status atomically to `.exit` (the server
 * reads exit codes there: there is no sacct without slurmdbd). A stop arrives as STOP_SIGNAL, which Slurm delivers to every process of the
 * task and which they ignore by default; the wrapper alone turns it into a SIGTERM of the
 * program's main process (remembered when it arrives before the program started), so the
 * program's helpers (DataLoader workers) run on while it checkpoints. Once the program ended, the
 * wrapper kills what is left of the rank (SWEEP_MARKED) before it records the exit; Slurm kills
 * what is left of the task once the wrapper exits. The TERM trap keeps the wrapper alive through a SIGTERM
 * Slurm itself sends (time limit, an operator's scancel) so it can record the program's code.
 * An ASK_SIGNAL runs ASK_FACTS (the program's /proc facts, and its stacks when asked).
 */
export const TASK_WRAPPER = [
  'run=$1 logs=$2 wd=$3; shift 3; c= stop=; trap : TERM INT HUP',
  `trap 'stop=1; [ -n "$c" ] && kill -TERM "$c" 2>/dev/null' WINCH`,
  'idx=$SLURM_PROCID',
  PICK_RANK_ENV,
  'p=$run/attempt-$GOODPUT_ATTEMPT-rank-$RANK',
  ASK_FACTS,
  `trap ask ${ASK_SIGNAL}`,
  `exec >>"$logs/${replicaLogName('$RANK')}" 2>&1`,
  'echo "--- goodput: attempt $GOODPUT_ATTEMPT, rank $RANK/$WORLD_SIZE, node ' +
    '$SLURMD_NODENAME, GPU $CUDA_VISIBLE_DEVICES, Slurm job $SLURM_JOB_ID, $(date -u ' +
    '+%Y-%m-%dT%H:%M:%SZ) ---"',
  // The workdir travels as an argument (any byte), never on an #SBATCH line (sbatch drops a
  // backslash there, and slurmstepd runs a job whose --chdir it cannot enter in /tmp, silently).
  `cd -- "$wd" 2>/dev/null || { printf 'goodput: cannot enter the workdir %s on node %s ` +
    `(missing there, or not a directory this account may enter); the program was not ` +
    `started\\n' "$wd" "$SLURMD_NODENAME"; echo ${WORKDIR_EXIT} > "$p.exit.tmp" && mv -f ` +
    `"$p.exit.tmp" "$p.exit"; exit ${WORKDIR_EXIT}; }`,
  '"$@" & c=$!',
  'echo "$SLURMD_NODENAME $c" > "$p.pid.tmp" && mv -f "$p.pid.tmp" "$p.pid"',
  '[ -n "$stop" ] && kill -TERM "$c" 2>/dev/null',
  'while :; do wait $c; r=$?; kill -0 $c 2>/dev/null || break; done',
  // A trap that ran while the program was exiting leaves 128 + its number in r: ask again.
  '[ "$r" -gt 128 ] && { wait $c; r=$?; }',
  SWEEP_MARKED,
  'echo $r > "$p.exit.tmp" && mv -f "$p.exit.tmp" "$p.exit"; exit $r',
].join('\n');

/** `s` as one single-quoted shell word (no expansion of any kind inside). */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * A value on an `#SBATCH` line: double-quoted (sbatch splits these lines at blanks but honours
 * double quotes). Throws E_LAUNCH for what such a line cannot carry.
 */
export function sbatchValue(value: string): string {
  // sbatch drops a backslash on these lines and expands %-patterns in --output.
  if (/["\n\r\\%]/.test(value))
    throw new GoodputError(
      'E_LAUNCH',
      `cannot pass ${JSON.stringify(value)} to sbatch: it contains a double quote, a line break, a backslash or a %`,
    );
  return `"${value}"`;
}

/** A GRES type as sbatch reads it (a name Slurm itself listed); anything else is refused. */
function gresName(type: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(type))
    throw new GoodputError(
      'E_LAUNCH',
      `cannot ask Slurm for GPUs of type ${JSON.stringify(type)}: not a GRES type name`,
    );
  return type;
}

/** The node of each rank, in rank order (ranks contiguous per node, as srun numbers the tasks). */
export function rankNodes(shares: readonly NodeShare[]): string[] {
  return shares.flatMap((s) => Array.from({ length: s.count }, () => s.node));
}

/**
 * The sbatch script. A rescale signals the step only (`scancel --signal=28` (WINCH), no `--full`;
 * TASK_WRAPPER forwards it as SIGTERM to the program): srun treats a SIGTERM of its own as "kill
 * the step now", which would cut the checkpoint short.
 * The batch shell ignores a SIGTERM sent to it (`--full` by someone else) so srun keeps waiting
 * for the tasks; one that arrived before the step started ends the job with 143 without it.
 */
export function batchScript(i: BatchScriptInput): string {
  const even = i.shares.every((s) => s.count === i.shares[0]!.count);
  // --no-requeue: after a node failure Goodput relaunches from the checkpoint as a new attempt;
  // Slurm's own requeue would run the same attempt a second time behind its back.
  const job = [
    `--job-name=${i.job_name}`,
    `--output=${sbatchValue(`${i.run_dir}/attempt-${i.attempt}.slurm.out`)}`,
    '--open-mode=append',
    `--chdir=${sbatchValue(i.run_dir)}`,
    '--export=ALL',
    '--no-requeue',
  ];
  // Every component of a heterogeneous job needs its own partition, account and QOS.
  const where = [
    ...(i.partition ? [`--partition=${sbatchValue(i.partition)}`] : []),
    ...(i.account ? [`--account=${sbatchValue(i.account)}`] : []),
    ...(i.qos ? [`--qos=${sbatchValue(i.qos)}`] : []),
  ];
  const header: string[] = [...job, ...where].map((o) => `#SBATCH ${o}`);
  // GPUs per node (--gres), not per task (--gpus-per-task binds each task to its one GPU): every
  // task on a node then sees the job's GPUs there in task order, its own at LOCAL_RANK, as
  // torchrun's workers see their node, so `cuda.set_device(LOCAL_RANK)` picks the right one.
  const gpus = (count: number) => `--gres=gpu:${i.gpu_type ? `${gresName(i.gpu_type)}:` : ''}${count}`;
  if (even) {
    header.push(
      `#SBATCH --nodes=${i.shares.length} --nodelist=${i.shares.map((s) => s.node).join(',')} ` +
        `--ntasks-per-node=${i.shares[0]!.count} ${gpus(i.shares[0]!.count)}`,
    );
  } else {
    i.shares.forEach((s, k) => {
      if (k > 0) header.push('#SBATCH hetjob', ...where.map((o) => `#SBATCH ${o}`));
      header.push(`#SBATCH --nodes=1 --nodelist=${s.node} --ntasks=${s.count} ${gpus(s.count)}`);
    });
  }
  const het = even ? '' : ` --het-group=0-${i.shares.length - 1}`;
  return [
    '#!/bin/sh',
    ...header,
    'stop=; trap stop=1 TERM',
    '[ -n "$stop" ] && exit 143',
    `srun --kill-on-bad-exit=0${het} /bin/sh -c ${shellQuote(TASK_WRAPPER)} goodput-replica ` +
      `${shellQuote(i.run_dir)} ${shellQuote(i.logs_dir)} ${shellQuote(i.workdir)} ` +
      `${i.command.map(shellQuote).join(' ')}`,
    '',
  ].join('\n');
}
