/**
 * How a Python script expects to be launched, where that conflicts with how goodput launches it
 * (one process per device, with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT set,
 * as torchrun does). Pure: reads a command, and the text outside comments of the script and the
 * local modules it imports (script-source.ts), with the arguments the command passes it.
 */
import { pythonScript } from '../core/profile-key.js';
import { commandLineRules, type LineOrigin } from './command-line-rules.js';
import type { SourceFile } from './script-source.js';

/**
 * Where in the job's code something is: as written, and its 1-based line; `file` names the
 * imported module it is in (absent: the script itself), `line` 0 with `file` 'the command line'
 * for an argument of the command.
 */
export interface SourceCall {
  call: string;
  line: number;
  file?: string;
}

/** `line 12`, `trainer.py, line 12` or `on the command line`, for messages. */
export function where(at: SourceCall): string {
  if (at.line === 0) return 'on the command line';
  return at.file === undefined ? `line ${at.line}` : `${at.file}, line ${at.line}`;
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
  /**
   * It fixes the devices its processes see (`os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu`, not
   * `setdefault` nor under a test of the variable): that replaces the devices goodput gives each
   * process, so two jobs (or ranks) train on the same GPU.
   */
  fixed_devices?: SourceCall;
  /**
   * The first sign that it runs as one of several processes (torch.distributed, DDP, FSDP,
   * Accelerate, DeepSpeed, Horovod, Lightning, the SDK, AdaptDL, RANK read from the environment);
   * absent: N copies of it each train the whole model alone and write the same files.
   */
  distributed?: SourceCall;
  /** It imports the Goodput SDK (in the script or a local module). */
  sdk?: SourceCall;
  /**
   * The command line fixes its rank or world size (`--world-size 1 --rank 0`, options the script
   * passes to init_process_group): every one of N processes would be that rank. `call` is the
   * options as given, `fix` the options to drop.
   */
  fixed_ranks?: { call: string; drop: string[]; env_url?: string };
}

/**
 * A command that starts its ranks through a launcher other than torchrun (which
 * torch-launcher.ts rewrites): `accelerate launch ...` or `deepspeed ...`. Each of goodput's
 * processes would run it, and it starts processes of its own on the devices that process sees
 * (Accelerate hands multi-GPU launches to torchrun, with its fixed port 29500). Both libraries
 * also run under torchrun's variables, which goodput sets, so the direct command is the script
 * under Python: `direct` is it, with `python3` for the interpreter the launcher would use.
 * Undefined for any other command, or when no `*.py` script follows the launcher.
 */
export function foreignLauncher(command: readonly string[]): { launcher: string; direct: string[] } | undefined {
  const program = command[0]?.slice(command[0].lastIndexOf('/') + 1);
  const launcher =
    program === 'accelerate' && command[1] === 'launch'
      ? 'accelerate launch'
      : program === 'deepspeed'
        ? 'deepspeed'
        : undefined;
  if (launcher === undefined) return undefined;
  const script = pythonScript(command); // the first *.py argument, as the profile key reads it
  return script === undefined
    ? undefined
    : { launcher, direct: ['python3', ...command.slice(command.indexOf(script, 1))] };
}

const SPAWNERS = ['spawn', 'start_processes'];

/** The rank as a launcher sets it, read from the environment (`os.environ["RANK"]`, `os.getenv("LOCAL_RANK")`, `"RANK" in os.environ`). */
const LAUNCHER_RANK = /["'](?:LOCAL_RANK|RANK)["']\s*(?:\]|\)|,|in\s+os\.environ)/;

/** LOCAL_RANK named anywhere (read from the environment, or passed on). */
const LOCAL_RANK_NAMED = /["']LOCAL_RANK["']/;

/** An argparse option `--local_rank` / `--local-rank` (torch.distributed.launch passes the former, torch 2 the latter). */
const LOCAL_RANK_OPTION = /add_argument\s*\(\s*["'](--local[_-]rank)["']/;

const escape = (s: string): string => s.replace(/[.]/g, '\\.');

/** An import of the SDK at the start of a line (`import goodput`, `from goodput.x import y`). */
const SDK_IMPORT = /^[ \t]*(?:import[ \t]+(goodput)\b|from[ \t]+(goodput)[ \t.])/;

/** What runs as one of several processes (see ScriptLaunch.distributed). */
const DISTRIBUTED =
  /\b(local[_-]rank|init_process_group|torch\.distributed|DistributedDataParallel|FullyShardedDataParallel|from\s+torch\s+import\s+distributed|Accelerator|deepspeed|horovod|lightning|goodput|adaptdl|jax\.distributed|tf\.distribute)\b|["'](?:WORLD_SIZE|RANK|LOCAL_RANK)["']/;

/** An assignment of CUDA_VISIBLE_DEVICES into the environment. */
const DEVICES_ASSIGNED =
  /(?<![\w.])(?:os\.)?environ\s*\[\s*["']CUDA_VISIBLE_DEVICES["']\s*\]\s*=(?!=)(.*)|["']CUDA_VISIBLE_DEVICES["']\s*:([^,}]*)/;

/**
 * What in the job's code conflicts with goodput's launch: `script` is one file's text, or the
 * files script-source.ts read (the script first); `args` the arguments the command passes the
 * script (they override its argparse defaults).
 */
export function scriptLaunch(script: string | readonly SourceFile[], args: readonly string[] = []): ScriptLaunch {
  const files = typeof script === 'string' ? [{ name: '', text: script }] : script;
  const lines: string[] = [];
  const origins: LineOrigin[] = [];
  files.forEach((f, index) => {
    f.text.split('\n').forEach((l, i) => {
      lines.push(l.replace(/#.*/, ''));
      origins.push(index === 0 ? { line: i + 1 } : { line: i + 1, file: f.name });
    });
  });
  const firstMatch = (found: (line: string, i: number) => string | undefined): SourceCall | undefined =>
    firstIn(lines, origins, found);
  const cli = commandLineRules(lines, args);
  const out: ScriptLaunch = {};
  const spawn = spawnCall(lines, firstMatch);
  if (spawn) out.spawn = spawn;
  const option = lines.some((l) => LOCAL_RANK_NAMED.test(l))
    ? undefined
    : firstMatch((line) => LOCAL_RANK_OPTION.exec(line)?.[1]);
  if (option) out.local_rank_option = option;
  const fixed =
    firstMatch((line, i) => (cli.overridden(i) ? undefined : fixedRendezvous(lines, line, i))) ??
    cli.given(TCP_URL_VALUE);
  if (fixed) out.fixed_rendezvous = fixed;
  const file =
    firstMatch((line, i) =>
      RENDEZVOUS_SETTING.test(line) && !cli.overridden(i) ? FILE_URL.exec(line)?.[1] : undefined,
    ) ?? cli.given(FILE_URL_VALUE);
  if (file) out.file_rendezvous = file;
  const adaptdl = firstMatch((line) => /^\s*(?:import|from)\s+(adaptdl)\b/.exec(line)?.[1]);
  if (adaptdl) out.adaptdl = adaptdl;
  // os.replace / os.rename / shutil.move, or pathlib's tmp.replace(path) (not str.replace("a", "b")).
  const renames = lines.some((l) =>
    /\b(?:os\.replace|os\.rename|shutil\.move)\s*\(|\.(?:replace|rename)\s*\(\s*\w/.test(l),
  );
  const save = renames ? undefined : firstMatch((line) => /(?<![\w.])(torch\.save)\s*\(/.exec(line)?.[1]);
  if (save) out.in_place_save = save;
  const devices = firstMatch((line, i) => fixedDevices(lines, line, i));
  if (devices) out.fixed_devices = devices;
  const distributed = firstMatch((line) => DISTRIBUTED.exec(line)?.[0]);
  if (distributed) out.distributed = distributed;
  const sdk = firstMatch((line) => {
    const m = SDK_IMPORT.exec(line);
    return m ? line.trim() : undefined;
  });
  if (sdk) out.sdk = sdk;
  const ranks = cli.fixedRanks();
  if (ranks) out.fixed_ranks = ranks;
  return out;
}

/** `--dist-url tcp://host:port` given on the command line. */
const TCP_URL_VALUE = /^tcp:\/\/[^\s{}]*:\d+$/;
const FILE_URL_VALUE = /^file:\/\//;

/** What `line` sets CUDA_VISIBLE_DEVICES to, unless from the environment, by setdefault or under a test of the variable. */
function fixedDevices(lines: readonly string[], line: string, i: number): string | undefined {
  const m = DEVICES_ASSIGNED.exec(line);
  if (!m) return undefined;
  const value = (m[1] ?? m[2]!).trim().replace(/;$/, '');
  if (/environ|getenv/.test(value) || guardedBy(lines, i, /CUDA_VISIBLE_DEVICES/)) return undefined;
  return `CUDA_VISIBLE_DEVICES = ${value}`;
}

/**
 * An assignment of MASTER_ADDR or MASTER_PORT into the environment: `os.environ[...] =` or
 * `environ[...] =` (groups 1, 2: the name, the rest of the line), or a dict key (`"MASTER_PORT":`,
 * as in `os.environ.update({...})`; groups 3, 4).
 */
const MASTER_ASSIGNED =
  /(?<![\w.])(?:os\.)?environ\s*\[\s*["'](MASTER_(?:ADDR|PORT))["']\s*\]\s*=(?!=)(.*)|["'](MASTER_(?:ADDR|PORT))["']\s*:([^,}]*)/;

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
  if (/environ|getenv/.test(value) || guardedBy(lines, i, /MASTER_(?:ADDR|PORT)/)) return undefined;
  return `${name} = ${value}`;
}

/** Whether the block holding line i opens with a test that names `name` (`if "MASTER_PORT" not in os.environ:`). */
function guardedBy(lines: readonly string[], i: number, name: RegExp): boolean {
  const indent = (l: string) => l.length - l.trimStart().length;
  const own = indent(lines[i]!);
  for (let j = i - 1; j >= 0; j--) {
    const l = lines[j]!;
    if (l.trim() === '' || indent(l) >= own) continue;
    return /^\s*(?:if|elif)\b/.test(l) && name.test(l);
  }
  return false;
}

/** The first line for which `found` gives something, with that thing and where the line is. */
function firstIn(
  lines: readonly string[],
  origins: readonly LineOrigin[],
  found: (line: string, i: number) => string | undefined,
): SourceCall | undefined {
  for (let i = 0; i < lines.length; i++) {
    const call = found(lines[i]!, i);
    if (call !== undefined) return { call, ...origins[i]! };
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
function spawnCall(
  lines: readonly string[],
  firstMatch: (found: (line: string) => string | undefined) => SourceCall | undefined,
): SourceCall | undefined {
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
  return firstMatch((line) => call.exec(line)?.[1]);
}
