/**
 * Commands that start their ranks through PyTorch's launcher (`torchrun ...`, `python -m
 * torch.distributed.run ...`). Goodput's backends are that launcher already: they start one
 * process per rank with torchrun's variables (docs/contract.md). A launcher inside a replica would
 * start ranks of its own on the replica's devices, with a rendezvous on torchrun's fixed port
 * 29500 that two such jobs on one machine fight over. So the command is rewritten to what
 * torchrun would have run in each worker, and its rank count becomes the job's. Pure.
 */

/** What a launcher command becomes. */
export type TorchLauncherCommand =
  | { kind: 'plain' }
  | {
      kind: 'unwrapped';
      /** The launcher as the user wrote it: `torchrun` or `python -m torch.distributed.run`. */
      launcher: string;
      /** The command of one rank, as torchrun's workers run it. */
      command: string[];
      /** nnodes x nproc_per_node when both are fixed numbers; undefined otherwise (`--nproc_per_node gpu`, `--nnodes 1:4`). */
      ranks: number | undefined;
      /** torchrun's `--max_restarts`, when given. */
      max_restarts: number | undefined;
    }
  | { kind: 'rejected'; reason: string };

/** Launcher options that take a value (torchrun 1.13 to 2.x; `-` and `_` are equivalent). */
const VALUE_OPTIONS = new Set([
  'nnodes',
  'nproc_per_node',
  'rdzv_backend',
  'rdzv_endpoint',
  'rdzv_id',
  'rdzv_conf',
  'max_restarts',
  'monitor_interval',
  'start_method',
  'role',
  'log_dir',
  'redirects',
  'r',
  'tee',
  't',
  'node_rank',
  'master_addr',
  'master_port',
  'local_addr',
  'logs_specs',
  'local_ranks_filter',
  'rdzv_timeout',
]);

/** Launcher options without a value. */
const FLAG_OPTIONS = new Set(['standalone', 'module', 'm', 'no_python', 'run_path', 'use_env']);

const LAUNCHER_MODULES = new Set(['torch.distributed.run', 'torch.distributed.launch']);

const PYTHON = /^(python|pypy)(\d+(\.\d+)*)?$/;

const base = (arg: string): string => arg.slice(arg.lastIndexOf('/') + 1);

/** Where the launcher's own arguments start, its name and the Python it runs workers with. */
function findLauncher(
  command: readonly string[],
  torchrunPython: string | undefined,
): { at: number; name: string; python: string[] | undefined; module: string | undefined } | undefined {
  const first = command[0];
  if (first === undefined) return undefined;
  if (base(first) === 'torchrun')
    return {
      at: 1,
      name: 'torchrun',
      python: torchrunPython === undefined ? undefined : [torchrunPython],
      module: undefined,
    };
  if (!PYTHON.test(base(first))) return undefined;
  for (let i = 1; i < command.length; i++) {
    const arg = command[i]!;
    const module = arg === '-m' ? command[i + 1] : arg.startsWith('-m') ? arg.slice(2) : undefined;
    if (module !== undefined) {
      if (!LAUNCHER_MODULES.has(module)) return undefined;
      // The worker runs under the same interpreter, with the same interpreter options.
      return {
        at: i + (arg === '-m' ? 2 : 1),
        name: `${base(first)} -m ${module}`,
        python: command.slice(0, i),
        module,
      };
    }
    if (!arg.startsWith('-')) return undefined;
    if (arg === '-c') return undefined;
    if (arg === '-W' || arg === '-X') i++;
  }
  return undefined;
}

/** A whole number >= 1, or undefined. */
function count(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 ? n : undefined;
}

/**
 * The command of one rank when `command` runs its script through torchrun (`torchrun`, `python
 * -m torch.distributed.run`, or `python -m torch.distributed.launch --use_env`); `plain` for any
 * other command. `torchrunPython` is the interpreter the `torchrun` program runs (its `#!` line),
 * undefined when unknown: a `torchrun` command is then rejected, since guessing `python3` may pick
 * an interpreter without torch. A launcher option this module does not know is rejected rather
 * than guessed (it might take a value). Rendezvous, restart and log options are dropped: the
 * backends set the rendezvous per attempt, and restarts and logs are the control plane's.
 */
export function unwrapTorchLauncher(
  command: readonly string[],
  torchrunPython: string | undefined,
): TorchLauncherCommand {
  const found = findLauncher(command, torchrunPython);
  if (found === undefined) return { kind: 'plain' };
  const values = new Map<string, string>();
  const flags = new Set<string>();
  let i = found.at;
  for (; i < command.length; i++) {
    const arg = command[i]!;
    if (arg === '--') {
      i++; // argparse's end of options: the script comes next
      break;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    const eq = arg.indexOf('=');
    const name = (eq === -1 ? arg : arg.slice(0, eq)).replace(/^-+/, '').replace(/-/g, '_');
    if (FLAG_OPTIONS.has(name) && eq === -1) {
      flags.add(name === 'm' ? 'module' : name);
    } else if (VALUE_OPTIONS.has(name)) {
      const value = eq === -1 ? command[++i] : arg.slice(eq + 1);
      if (value === undefined) return { kind: 'rejected', reason: `${found.name}: option ${arg} needs a value` };
      values.set(name, value);
    } else {
      return { kind: 'rejected', reason: `${found.name}: unknown option ${arg}` };
    }
  }
  const program = command[i];
  if (program === undefined) return { kind: 'rejected', reason: `${found.name}: no script to run` };
  if (found.module === 'torch.distributed.launch' && !flags.has('use_env')) {
    return {
      kind: 'rejected',
      reason:
        `${found.name} without --use_env passes --local_rank to the script; goodput sets ` +
        `LOCAL_RANK instead, as torchrun does: read os.environ['LOCAL_RANK'] in the script and run ` +
        `it directly`,
    };
  }
  const rest = command.slice(i + 1);
  let rank_command: string[];
  if (flags.has('no_python')) {
    if (flags.has('module'))
      return { kind: 'rejected', reason: `${found.name}: --no_python and -m contradict each other` };
    rank_command = [program, ...rest];
  } else {
    if (found.python === undefined) {
      return {
        kind: 'rejected',
        reason:
          'cannot tell which Python torchrun runs (it is not on PATH here, or its first line names no interpreter)',
      };
    }
    rank_command = [...found.python, ...(flags.has('module') ? ['-m'] : []), program, ...rest];
  }
  const nproc = count(values.get('nproc_per_node') ?? '1');
  const nnodesText = values.get('nnodes') ?? '1';
  const range = /^(\d+):(\d+)$/.exec(nnodesText);
  const nnodes = range !== null && range[1] === range[2] ? count(range[1]) : count(nnodesText);
  const restarts = values.get('max_restarts');
  return {
    kind: 'unwrapped',
    launcher: found.name,
    command: rank_command,
    ranks: nproc !== undefined && nnodes !== undefined ? nproc * nnodes : undefined,
    max_restarts: restarts !== undefined && /^\d+$/.test(restarts) ? Number(restarts) : undefined,
  };
}

/**
 * The interpreter a launcher script's first line names (`#!/usr/bin/python3.11` ->
 * `/usr/bin/python3.11`, `#!/usr/bin/env python3` -> `python3`), or undefined when it names none.
 */
export function shebangInterpreter(firstLine: string): string | undefined {
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(firstLine);
  if (m === null) return undefined;
  const program = base(m[1]!) === 'env' ? m[2] : m[1];
  return program !== undefined && PYTHON.test(base(program)) ? program : undefined;
}
