/**
 * Scripts that start their own worker processes, as the DDP tutorials written before torchrun
 * do (`mp.spawn(main, args=(world_size,), nprocs=world_size)`). Goodput starts one process per
 * device itself (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT set, as torchrun
 * does), so each of its processes would start a group of its own. Pure: reads the script's text.
 */

/** A call of torch.multiprocessing's `spawn` or `start_processes` in a script. */
export interface SelfSpawn {
  /** The call as written, e.g. `mp.spawn`. */
  call: string;
  /** 1-based line of the first such call. */
  line: number;
}

const SPAWNERS = ['spawn', 'start_processes'];

/** The rank as a launcher sets it, read from the environment (`os.environ["RANK"]`, `os.getenv("LOCAL_RANK")`, `"RANK" in os.environ`). */
const LAUNCHER_RANK = /["'](?:LOCAL_RANK|RANK)["']\s*(?:\]|\)|,|in\s+os\.environ)/;

const escape = (s: string): string => s.replace(/[.]/g, '\\.');

/**
 * The first call of torch.multiprocessing's `spawn` or `start_processes` in `script` (Python
 * source), outside comments: through the module's full name, an alias it was imported as
 * (`import torch.multiprocessing as mp`, `from torch import multiprocessing as mp`), or the
 * function imported by name. Python's own `multiprocessing` is not torch's: its `spawn` is a
 * start method, not a launcher.
 */
export function selfSpawnCall(script: string): SelfSpawn | undefined {
  const lines = script.split('\n').map((l) => l.replace(/#.*/, ''));
  // A script that reads its rank from the environment runs under torchrun too, spawning only
  // when launched alone (`if "RANK" in os.environ: main(...) else: mp.spawn(...)`).
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
