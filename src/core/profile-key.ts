/**
 * Profile keys of jobs: the name under which the control plane keeps what the jobs
 * of one model taught about its scaling. A spec may name its key (`profile`); the default is
 * derived from the command so that the same model rerun with other seeds, data or
 * hyper-parameters gets the same key. Pure.
 */

/** What a profile key may look like: letters, digits, ".", "_", "-", at most 128, starting with a letter or digit. */
export const PROFILE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Human wording of PROFILE_KEY, for error messages. */
export const PROFILE_KEY_RULE = 'letters, digits, ".", "_" or "-", at most 128, starting with a letter or digit';

/** Interpreters whose first non-option argument is the program: python, python3, python3.11, pypy3, node. */
const INTERPRETER = /^(python|pypy|node)(\d+(\.\d+)*)?$/;

/** Launchers that run a script of their own arguments (the script is the program). */
const LAUNCHERS = new Set(['torchrun', 'deepspeed', 'horovodrun', 'accelerate', 'mpirun', 'mpiexec', 'env']);

/** Python modules that are launchers themselves (`python -m torch.distributed.run train.py`). */
const LAUNCHER_MODULES = new Set([
  'torch.distributed.run',
  'torch.distributed.launch',
  'accelerate.commands.launch',
  'deepspeed',
]);

/** Interpreter options that take a value as the next argument. */
const INTERPRETER_VALUE_OPTIONS = new Set(['-W', '-X', '--require', '-r', '--import', '--loader']);

/** Interpreter options whose value is the program itself (python -c, node -e/--eval/-p/--print). */
const INLINE_CODE = new Set(['-c', '-e', '--eval', '-p', '--print']);

/** Launcher options that take no value (every other `--opt` without `=` takes the next argument). */
const LAUNCHER_FLAGS = new Set([
  '--standalone',
  '--no-python',
  '--no_python',
  '--run-path',
  '--run_path',
  '-m',
  '--module',
  '--use_env',
  '--use-env',
  '-i',
  '--ignore-environment',
  '--oversubscribe',
  '--allow-run-as-root',
]);

const base = (arg: string): string => arg.slice(arg.lastIndexOf('/') + 1);

/** `s` as a key: disallowed characters become "-", at most 128 characters; undefined when nothing is left. */
function asKey(s: string): string | undefined {
  const key = s
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
  return key === '' ? undefined : key;
}

/**
 * Script names that say nothing about the model: for these the key is `<folder>.<name>`, the
 * folder being the one the script is in (`a/main.py` -> `a.main`; a bare `main.py` takes the
 * job's workdir's folder, `/home/u/imagenet` -> `imagenet.main`), so that projects with a
 * `main.py` each never pool their profiles, while two checkouts of one project still do.
 */
const GENERIC_STEMS = new Set([
  'main',
  'train',
  'run',
  'trainer',
  'training',
  'script',
  'app',
  'model',
  'launch',
  'start',
  '__main__',
  'ddp',
  'multigpu',
  'dist',
  'distributed',
]);

/**
 * The name of the folder `arg` is in: its own directory part, resolved against `workdir` when
 * relative (POSIX paths, `.` and `..` followed); undefined when none can be named (a bare name
 * without a workdir, or the root).
 */
function folderOf(arg: string, workdir: string | undefined): string | undefined {
  const dir = arg.includes('/') ? arg.slice(0, arg.lastIndexOf('/')) || '/' : '';
  if (!dir.startsWith('/') && workdir === undefined) {
    const own = dir.split('/').filter((p) => p !== '' && p !== '.');
    return own.length > 0 && own[own.length - 1] !== '..' ? own[own.length - 1] : undefined;
  }
  const parts: string[] = [];
  for (const p of (dir.startsWith('/') ? dir : `${workdir ?? ''}/${dir}`).split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return parts[parts.length - 1];
}

/**
 * A script's key: its file name without directory and extension (`models/resnet50.py` ->
 * `resnet50`); for a generic name (GENERIC_STEMS) its folder comes first
 * (`examples/digits/train.py` -> `digits.train`; `train.py` in workdir `/x/cnn` -> `cnn.train`).
 */
function scriptKey(arg: string, workdir: string | undefined): string | undefined {
  const name = base(arg);
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const folder = dot > 0 && GENERIC_STEMS.has(stem) ? folderOf(arg, workdir) : undefined;
  return folder !== undefined ? asKey(`${folder}.${stem}`) : asKey(stem);
}

/** 32-bit FNV-1a of `s` as 8 hex digits (names inline code without node:crypto). */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The default profile key of a command (argv). Arguments of the program are ignored (seeds,
 * learning rates, data paths change between runs of one model); interpreters and launchers are
 * skipped, with their options:
 * - `python3.11 -u resnet.py --lr 0.1` -> `resnet`; `python -m pkg.train` -> `pkg.train`;
 *   `python a/main.py` -> `a.main`, `python main.py` in `/x/ncf` -> `ncf.main` (generic script
 *   names take their folder, see scriptKey; `workdir` is the job's, absent: the name alone);
 * - `torchrun --nproc_per_node 4 train.py`, `python -m torch.distributed.run ... train.py`,
 *   `accelerate launch train.py`, `env A=1 python train.py` -> `train`;
 * - `python -c CODE` -> `python-c-<hash of CODE>` (`node -e CODE` -> `node-e-<hash>`);
 * - anything else: the program's file name (`./train.sh --x` -> `train`, `/opt/bin/trainer` -> `trainer`).
 * The result always matches PROFILE_KEY (`job` when nothing usable is left). Pure, deterministic.
 */
export function defaultProfileKey(command: readonly string[], workdir?: string): string {
  let i = 0;
  let launcher = false;
  while (i < command.length) {
    const arg = command[i]!;
    const prog = base(arg);
    if (!launcher && INTERPRETER.test(prog)) {
      i++;
      while (i < command.length && command[i]!.startsWith('-') && command[i] !== '-') {
        const opt = command[i]!;
        if (opt === '-m' || (opt.startsWith('-m') && !opt.startsWith('--'))) {
          const module = opt === '-m' ? command[i + 1] : opt.slice(2);
          if (module === undefined) return 'job';
          if (!LAUNCHER_MODULES.has(module)) return asKey(module) ?? 'job';
          i += opt === '-m' ? 2 : 1;
          launcher = true;
          break;
        }
        if (INLINE_CODE.has(opt))
          return `${asKey(prog) ?? 'python'}${opt.replace(/^-+/, '-')}-${fnv1a(command[i + 1] ?? '')}`;
        i += INTERPRETER_VALUE_OPTIONS.has(opt) ? 2 : 1;
      }
      if (launcher) continue;
      return i < command.length ? (scriptKey(command[i]!, workdir) ?? 'job') : (asKey(prog) ?? 'job');
    }
    if (!launcher && LAUNCHERS.has(prog)) {
      i++;
      if (prog === 'accelerate' && command[i] === 'launch') i++;
      launcher = true;
      continue;
    }
    if (launcher) {
      if (arg.startsWith('-')) {
        if ((arg === '-m' || arg === '--module') && command[i + 1] !== undefined)
          return asKey(command[i + 1]!) ?? 'job';
        const next = command[i + 1];
        // A value follows every option but the known flags, unless the program comes next.
        const takesValue =
          !arg.includes('=') &&
          !LAUNCHER_FLAGS.has(arg) &&
          next !== undefined &&
          !next.endsWith('.py') &&
          !INTERPRETER.test(base(next));
        i += takesValue ? 2 : 1;
        continue;
      }
      // `env NAME=VALUE ...` and `torchrun python train.py` (with --no-python).
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) {
        i++;
        continue;
      }
      if (INTERPRETER.test(prog)) {
        launcher = false;
        continue;
      }
    }
    return scriptKey(arg, workdir) ?? 'job';
  }
  return 'job';
}

/**
 * The profile key of a spec: its `profile`, else the default of its command in its workdir.
 * A stored spec always has `profile` (admission fills it in), so a job keeps the key it was
 * submitted with when this rule changes.
 */
export function profileKeyOf(spec: {
  profile?: string | undefined;
  command: readonly string[];
  workdir?: string;
}): string {
  return spec.profile ?? defaultProfileKey(spec.command, spec.workdir);
}

/**
 * The Python script a command runs, as written (relative to the workdir unless absolute), or
 * undefined when it runs none that way (`python -m pkg`, `python -c CODE`, a binary): the first
 * argument ending in `.py` when the program itself is that script or an interpreter or launcher
 * that comes before it (`python3 -u train.py`, `torchrun --nproc_per_node 2 train.py`,
 * `env A=1 python3 a/main.py`). Pure.
 */
export function pythonScript(command: readonly string[]): string | undefined {
  const first = command[0];
  if (first === undefined) return undefined;
  if (first.endsWith('.py')) return first;
  if (!INTERPRETER.test(base(first)) && !LAUNCHERS.has(base(first))) return undefined;
  for (const arg of command.slice(1)) {
    if (arg === '-m' || arg === '--module' || (arg.startsWith('-m') && !arg.startsWith('--')) || INLINE_CODE.has(arg))
      return undefined;
    if (arg.endsWith('.py') && !arg.startsWith('-') && !arg.includes('=')) return arg;
  }
  return undefined;
}
