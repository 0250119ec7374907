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
  /**
   * It fixes its own rendezvous: it assigns MASTER_ADDR or MASTER_PORT
   * (`os.environ["MASTER_PORT"] = "12355"`, not `setdefault`) or names a literal
   * `tcp://host:port`. goodput gives each attempt rank 0's node and a free port; the script's
   * own replace them, so two jobs of it on one node bind the same port (the second fails with
   * "Address already in use"), and on several nodes a fixed "localhost" leaves the other nodes'
   * ranks waiting out the rendezvous timeout.
   */
  fixed_rendezvous?: SourceCall;
  /**
   * Its processes meet through a file (`init_method="file:///..."`). The file outlives a process
   * that a stop or a kill ends, and a later attempt that finds it counts the old processes too:
   * it waits out the rendezvous timeout (30 min by default) and fails ("Timed out initializing
   * process group in store based barrier ... worker_count=4").
   */
  file_rendezvous?: SourceCall;
  /**
   * It is written for AdaptDL (`import adaptdl.torch as adl`): AdaptDL takes its replicas,
   * batch size and checkpoint path from its own scheduler's ADAPTDL_* variables, which goodput
   * does not set. goodput.torch covers the same API (docs/migrating-from-adaptdl.md).
   */
  adaptdl?: SourceCall;
  /**
   * It saves with `torch.save` straight to the file it resumes from: no `os.replace` or rename
   * anywhere. A stop's SIGTERM ends a plain script at once, possibly in the middle of the save,
   * and a snapshot cut short fails every later attempt that loads it. Only a script that resumes
   * from its own snapshot (`resumable`) needs to care.
   */
  in_place_save?: SourceCall;
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
  const option = lines.some((l) => LOCAL_RANK_NAMED.test(l)) ? undefined : firstMatch(lines, (line) => LOCAL_RANK_OPTION.exec(line)?.[1]);
  if (option) out.local_rank_option = option;
  const fixed = firstMatch(lines, (line, i) => fixedRendezvous(lines, line, i));
  if (fixed) out.fixed_rendezvous = fixed;
  const file = firstMatch(lines, (line) => (RENDEZVOUS_SETTING.test(line) ? FILE_URL.exec(line)?.[1] : undefined));
  if (file) out.file_rendezvous = file;
  const adaptdl = firstMatch(lines, (line) => /^\s*(?:import|from)\s+(adaptdl)\b/.exec(line)?.[1]);
  if (adaptdl) out.adaptdl = adaptdl;
  // os.replace / os.rename / shutil.move, or pathlib's tmp.replace(path) (not str.replace("a", "b")).
  const renames = lines.some((l) => /\b(?:os\.replace|os\.rename|shutil\.move)\s*\(|\.(?:replace|rename)\s*\(\s*\w/.test(l));
  const save = renames ? undefined : firstMatch(lines, (line) => /(?<![\w.])(torch\.save)\s*\(/.exec(line)?.[1]);
  if (save) out.in_place_save = save;
  return out;
}

/**
 * An assignment of MASTER_ADDR or MASTER_PORT into the environment: `os.environ[...] =` or
 * `environ[...] =` (groups 1, 2: the name, the rest of the line), or a dict key (`"MASTER_PORT":`,
 * as in `os.environ.update({...})`; groups 3, 4).
 */
const MASTER_ASSIGNED = /(?<![\w.])(?:os\.)?environ\s*\[\s*["'](MASTER_(?:ADDR|PORT))["']\s*\]\s*=(?!=)(.*)|["'](MASTER_(?:ADDR|PORT))["']\s*:([^,}]*)/;

/** A literal TCP rendezvous with a port (`"tcp://127.0.0.1:23456"`); one built from variables (`f"tcp://{addr}:{port}"`) is not fixed here. */
const TCP_URL = /[fr]?["'](tcp:\/\/[^"'{}\s]*:\d+)["']/;

/** A line that sets a process group's rendezvous: `init_method=`, or an option such as `--dist-url` / `--init-method`. */
const RENDEZVOUS_SETTING = /init_method|["']--(?:dist|init)[-_](?:url|method)["']/;

const FILE_URL = /[fr]?["'](file:\/\/[^"']*)["']/;

/** What `line` (the i-th of `lines`) fixes of the rendezvous, as written; undefined when nothing. */
function fixedRendezvous(lines: readonly string[], line: string, i: number): string | undefined {
  const tcp = TCP_URL.exec(line);
  if (tcp) return tcp[1];
  const m = MASTER_ASSIGNED.exec(line);
  if (!m) return undefined;
  const name = m[1] ?? m[3]!;
  const value = (m[2] ?? m[4]!).trim().replace(/;$/, '');
  // A value read from the environment (`os.environ.get("MASTER_PORT", "12355")`), or an
  // assignment under a test of the variable, keeps what the launcher set.
  if (/environ|getenv/.test(value) || guardedByMaster(lines, i)) return undefined;
  return `${name} = ${value}`;
}

/** Whether the block holding line i opens with a test that names MASTER_ADDR or MASTER_PORT (`if "MASTER_PORT" not in os.environ:`). */
function guardedByMaster(lines: readonly string[], i: number): boolean {
  const indent = (l: string) => l.length - l.trimStart().length;
  const own = indent(lines[i]!);
  for (let j = i - 1; j >= 0; j--) {
    const l = lines[j]!;
    if (l.trim() === '' || indent(l) >= own) continue;
    return /^\s*(?:if|elif)\b.*MASTER_(?:ADDR|PORT)/.test(l);
  }
  return false;
}

/** The first line for which `found` gives something, with that thing and the line's 1-based number. */
function firstMatch(lines: readonly string[], found: (line: string, i: number) => string | undefined): SourceCall | undefined {
  for (let i = 0; i < lines.length; i++) {
    const call = found(lines[i]!, i);
    if (call !== undefined) return { call, line: i + 1 };
  }
  return undefined;
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
  return firstMatch(lines, (line) => call.exec(line)?.[1]);
}
