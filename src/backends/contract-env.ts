/**
 * The contract's variables of one attempt (docs/contract.md), built once for every backend: the
 * rendezvous and Goodput variables common to all ranks, and per rank the variables torchrun sets
 * for its workers (RANK, LOCAL_RANK, GROUP_RANK, ROLE_RANK, LOCAL_WORLD_SIZE, ...). A local
 * backend adds a rank's set to the common one; a cluster backend that learns a task's rank only
 * inside the task (Slurm) ships `perRankLists` and picks the rank's values there. Pure.
 */

/** Ports MASTER_PORT is drawn from (`goodput up --port-range`), both ends included. */
export interface PortRange {
  first: number;
  last: number;
}

/** What the variables are made of. */
export interface ContractInput {
  job_id: string;
  attempt: number;
  /** Node of each rank, in rank order (any labels: equal labels = one node); ranks contiguous per node. */
  rank_nodes: readonly (string | number)[];
  master_addr: string;
  master_port: number;
  api_url: string;
  token: string;
  checkpoint_dir: string;
  /** Restarts after failures so far (torchrun's TORCHELASTIC_RESTART_COUNT). */
  restarts: number;
  max_restarts: number;
  /** Whether the environment the program starts from already sets variable `name` (the contract's defaults then give way). */
  preset: (name: string) => boolean;
  /** GPU type of the attempt's devices (backends/device-type.ts); absent: GOODPUT_GPU_TYPE is not set. */
  gpu_type?: string;
}

/** The variables of one attempt: `common` to every rank, `ranks[r]` of rank r. */
export interface ContractEnv {
  common: Record<string, string>;
  ranks: Record<string, string>[];
}

/**
 * The contract's variables. Per rank, as torchrun's local agent sets them for one role
 * ("default"): GROUP_RANK = index of the rank's node in the placement, ROLE_RANK = RANK,
 * LOCAL_WORLD_SIZE = ranks on its node, and OMP_NUM_THREADS=1 where a node runs more than one rank
 * and the program's environment does not set it (torchrun's default, so that N processes do not
 * each start one thread per core). TORCHELASTIC_USE_AGENT_STORE is False: no agent hosts a store,
 * so rank 0 creates the rendezvous store at MASTER_ADDR:MASTER_PORT (init_method env://).
 * PYTHONUNBUFFERED=1 unless the program's environment sets it: the replica's output goes to a log
 * file, where Python would buffer its prints by the 8 KiB block, so that `goodput logs -f` showed
 * nothing for minutes and a replica ended by a signal lost its last lines.
 */
export function contractEnv(i: ContractInput): ContractEnv {
  const world = i.rank_nodes.length;
  const groups: (string | number)[] = [];
  for (const n of i.rank_nodes) if (!groups.includes(n)) groups.push(n);
  const common: Record<string, string> = {
    WORLD_SIZE: String(world),
    ROLE_WORLD_SIZE: String(world),
    ROLE_NAME: 'default',
    GROUP_WORLD_SIZE: String(groups.length),
    MASTER_ADDR: i.master_addr,
    MASTER_PORT: String(i.master_port),
    TORCHELASTIC_RESTART_COUNT: String(i.restarts),
    TORCHELASTIC_MAX_RESTARTS: String(i.max_restarts),
    TORCHELASTIC_RUN_ID: i.job_id,
    TORCHELASTIC_USE_AGENT_STORE: 'False',
    GOODPUT_API: i.api_url,
    GOODPUT_JOB_ID: i.job_id,
    GOODPUT_TOKEN: i.token,
    GOODPUT_CHECKPOINT_DIR: i.checkpoint_dir,
    GOODPUT_ATTEMPT: String(i.attempt),
    GOODPUT_NUM_NODES: String(groups.length),
    ...(i.gpu_type !== undefined ? { GOODPUT_GPU_TYPE: i.gpu_type } : {}),
    ...(i.preset('PYTHONUNBUFFERED') ? {} : { PYTHONUNBUFFERED: '1' }),
  };
  const ranks = i.rank_nodes.map((node, rank) => {
    const same = i.rank_nodes.filter((n) => n === node).length;
    const local = i.rank_nodes.slice(0, rank).filter((n) => n === node).length;
    const r: Record<string, string> = {
      RANK: String(rank),
      ROLE_RANK: String(rank),
      LOCAL_RANK: String(local),
      LOCAL_WORLD_SIZE: String(same),
      GROUP_RANK: String(groups.indexOf(node)),
    };
    if (same > 1 && !i.preset('OMP_NUM_THREADS')) r.OMP_NUM_THREADS = '1';
    return r;
  });
  return { common, ranks };
}

/**
 * CUDA_VISIBLE_DEVICES of `rank` as torchrun's workers see their node: the devices of the job's
 * ranks on the rank's node, in rank order, so that entry LOCAL_RANK is the rank's own GPU. A
 * torchrun script selects its GPU with `cuda.set_device(LOCAL_RANK)`, which fails with a single
 * visible device on every rank but the node's first; a script that never selects one runs on
 * entry 0, as it would under torchrun. `rank_nodes` and `devices` are indexed by rank (ranks
 * contiguous per node).
 */
export function nodeVisibleDevices(
  rank_nodes: readonly (string | number)[],
  devices: readonly number[],
  rank: number,
): string {
  return devices.filter((_, r) => rank_nodes[r] === rank_nodes[rank]).join(',');
}

/** Prefix of the per-rank lists a task picks its values from (`perRankLists`). */
export const PER_RANK_PREFIX = 'GOODPUT_RANKS_';

/**
 * The per-rank variables as lists, one variable `GOODPUT_RANKS_<NAME>` per name with the values
 * of ranks 0, 1, ... comma-separated (values are numbers), plus `GOODPUT_RANKS` naming them; a
 * task exports NAME = field RANK + 1 of its list (`PICK_RANK_ENV`). A rank without the variable
 * (OMP_NUM_THREADS on a node of one rank) has an empty field and gets no variable.
 */
export function perRankLists(ranks: readonly Record<string, string>[]): Record<string, string> {
  const names = [...new Set(ranks.flatMap((r) => Object.keys(r)))].sort();
  const out: Record<string, string> = { GOODPUT_RANKS: names.join(' ') };
  for (const name of names) out[PER_RANK_PREFIX + name] = ranks.map((r) => r[name] ?? '').join(',');
  return out;
}

/**
 * Shell text (POSIX sh) run in a task that knows its rank as `$idx` (0-based): exports each
 * variable of `perRankLists` for that rank and removes the lists. Names are ours (upper
 * case letters and "_"), so the eval'd text is fixed; values are expanded, never evaluated.
 */
export const PICK_RANK_ENV = [
  'for v in $GOODPUT_RANKS; do',
  '  eval "x=\\${GOODPUT_RANKS_$v}"; x=$(echo "$x" | cut -d, -f$((idx + 1)))',
  '  [ -n "$x" ] && export "$v=$x"; unset "GOODPUT_RANKS_$v"',
  'done; unset GOODPUT_RANKS',
].join('\n');

/** Parses `A-B` (`goodput up --port-range`): 1 <= A <= B <= 65535. Throws a message on bad input. */
export function parsePortRange(text: string): PortRange {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (!m || first < 1 || last > 65535 || first > last)
    throw new Error(`expected FIRST-LAST with 1 <= FIRST <= LAST <= 65535 (e.g. 29500-29999), got '${text}'`);
  return { first, last };
}
