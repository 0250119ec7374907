/**
 * How a Python script expects to be launched, where that conflicts with how goodput launches it
 * (one process per device, with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT set,
 * as torchrun does). Pure: reads a command, or a script's text outside comments.
 */
import { pythonScript } from './profile-key.js';

/** Where in a script something is: as written, and its 1-based line. */
export interface SourceCall {
  call: string;
  line: number;
}

/** What in a script conflicts with goodput's launch; both absent when nothing does. */
export interface ScriptLaunch {
  /**
   * It starts its own worker processes, as the DDP tutorials written before torchrun do
   * (`mp.spawn(main, args=(world_size,), nprocs=world_size)`): each of goodput's processes
   * would start a group of its own.
   */
  spawn?: SourceCall;
  /**
   * It takes its local rank from a `--local_rank` option, as torch.distributed.launch passed it,
   * and never reads LOCAL_RANK: every process gets the option's default.
   */
  local_rank_option?: SourceCall;
}

/**
 * A command that starts its ranks through a launcher other than torchrun (which
 * core/torch-launcher.ts rewrites): `accelerate launch ...` or `deepspeed ...`. Each of goodput's
 * processes would run it, and it starts processes of its own on the devices that process sees
 * (Accelerate hands multi-GPU launches to torchrun, with its fixed port 29500). Both libraries
 * also run under torchrun's variables, which goodput sets, so the direct command is the script
 * under Python: `direct` is it, with `python3` for the interpreter the launcher would use.
 * Undefined for any other command, or when no `*.py` script follows the launcher.
 */
export function foreignLauncher(command: readonly string[]): { launcher: string; direct: string[] } | undefined {
  const program = command[0]?.slice(command[0].lastIndexOf('/') + 1);
  const launcher = program === 'accelerate' && command[1] === 'launch' ? 'accelerate launch' : program === 'deepspeed' ? 'deepspeed' : undefined;
  if (launcher === undefined) return undefined;
  const script = pythonScript(command); // the first *.py argument, as the profile key reads it
  return script === undefined ? undefined : { launcher, direct: ['python3', ...command.slice(command.indexOf(script, 1))] };
}

const SPAWNERS = ['spawn', 'start_processes'];

/** The rank as a launcher sets it, read from the environment (`os.environ["RANK"]`, `os.getenv("LOCAL_RANK")`, `"RANK" in os.environ`). */
const LAUNCHER_RANK = /["'](?:LOCAL_RANK|RANK)["']\s*(?:\]|\)|,|in\s+os\.environ)/;

/** LOCAL_RANK named anywhere (read from the environment, or passed on). */
const LOCAL_RANK_NAMED = /["']LOCAL_RANK["']/;

/** An argparse option `--local_rank` / `--local-rank` (torch.distributed.launch passes the former, torch 2 the latter). */
const LOCAL_RANK_OPTION = /add_argument\s*\(\s*["'](--local[_-]rank)["']/;

const escape = (s: string): string => s.replace(/[.]/g, '\\.');

/** What in `script` (Python source) conflicts with goodput's launch. */
export function scriptLaunch(script: string): ScriptLaunch {
  const lines = script.split('\n').map((l) => l.replace(/#.*/, ''));
  const out: ScriptLaunch = {};
  const spawn = spawnCall(lines);
  if (spawn) out.spawn = spawn;
  if (!lines.some((l) => LOCAL_RANK_NAMED.test(l))) {
    const at = lines.findIndex((l) => LOCAL_RANK_OPTION.test(l));
    if (at >= 0) out.local_rank_option = { call: LOCAL_RANK_OPTION.exec(lines[at]!)![1]!, line: at + 1 };
  }
  return out;
}

/**
 * The first call of torch.multiprocessing's `spawn` or `start_processes`: through the module's
 * full name, an alias it was imported as (`import torch.multiprocessing as mp`, `from torch
 * import multiprocessing as mp`), or the function imported by name. Python's own
 * `multiprocessing` is not torch's: its `spawn` is a start method, not a launcher. None in a
 * script that reads its rank from the environment: it runs under torchrun too, spawning only when
 * launched alone (`if "RANK" in os.environ: main(...) else: mp.spawn(...)`).
 */
function spawnCall(lines: readonly string[]): SourceCall | undefined {
  if (lines.some((l) => LAUNCHER_RANK.test(l))) return undefined;
  const modules = new Set(['torch.multiprocessing']);
  const names = new Set<string>();
  for (const line of lines) {
    const plain = /^\s*import\s+torch\.multiprocessing(?:\s+as\s+(\w+))?\s*$/.exec(line);
    if (plain?.[1]) modules.add(plain[1]);
    const from = /^\s*from\s+torch\s+import\s+multiprocessing(?:\s+as\s+(\w+))?\s*$/.exec(line);
    if (from) modules.add(from[1] ?? 'multiprocessing');
    const fn = /^\s*from\s+torch\.multiprocessing\s+import\s+\(?([^)]*)\)?\s*$/.exec(line);
    for (const item of fn?.[1]?.split(',') ?? []) {
      const [name, alias] = item.trim().split(/\s+as\s+/);
      if (name && SPAWNERS.includes(name)) names.add(alias ?? name);
    }
  }
  const callees = [...[...modules].flatMap((m) => SPAWNERS.map((f) => `${m}.${f}`)), ...names].map(escape);
  const call = new RegExp(`(?<![\\w.])(${callees.join('|')})\\s*\\(`);
  for (let i = 0; i < lines.length; i++) {
    const m = call.exec(lines[i]!);
    if (m) return { call: m[1]!, line: i + 1 };
  }
  return undefined;
}
