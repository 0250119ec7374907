/**
 * What a failed replica's log says went wrong, when it is one of the mistakes scripts make under
 * goodput's launch (admission/script-launch.ts warns at submit about the ones a script's text shows):
 * the wrong interpreter, a rendezvous of their own, another launcher's variables, a GPU asked of
 * a replica that has none, a checkpoint of their own written in place and cut short, a full
 * disk. Pure: text in, text out. Each pattern is the message Debian's torch 1.13 (or Python)
 * prints, checked against real output in failure-hint.test.ts.
 */

/** One recognised failure: the log's line, and what to do about it. */
interface Known {
  pattern: RegExp;
  /** The hint for the matching line `m`; `tail` is the whole log tail, for context. */
  hint: (m: RegExpExecArray, tail: string) => string | undefined;
}

/** Modules that are installed, never the job's own code: a missing one is the interpreter's fault. */
const LIBRARIES = new Set([
  'torch',
  'torchvision',
  'torchaudio',
  'numpy',
  'scipy',
  'pandas',
  'sklearn',
  'PIL',
  'yaml',
  'tqdm',
  'transformers',
  'datasets',
  'accelerate',
  'deepspeed',
  'lightning',
  'pytorch_lightning',
  'timm',
  'tensorboard',
  'wandb',
]);

const RENDEZVOUS = 'goodput sets MASTER_ADDR and a free MASTER_PORT for each attempt';

const KNOWN: readonly Known[] = [
  {
    pattern: /ModuleNotFoundError: No module named '([\w.]+)'/,
    hint: (m) => {
      const top = m[1]!.split('.')[0]!;
      const interpreter =
        `the Python that ran it has no module '${m[1]}': run the job with one that has it (its ` +
        `full path, --venv DIR or --conda DIR), since a replica runs the first python3 on the PATH ` +
        `it sees, which need not be your shell's`;
      if (top === 'adaptdl')
        return (
          `the script is written for AdaptDL, which the Python that ran it lacks (and whose elastic ` +
          `features need AdaptDL's own scheduler): port it to goodput.torch, mostly a change of ` +
          `imports (docs/migrating-from-adaptdl.md)`
        );
      if (top === 'goodput')
        return `${interpreter}, or install the Goodput SDK into it (pip install ./python, docs/sdk.md)`;
      return LIBRARIES.has(top)
        ? interpreter
        : `${interpreter}; or, if '${m[1]}' is the job's own code, check --workdir`;
    },
  },
  {
    pattern: /failed to bind to \S*?:(\d+) \(errno: 98 - Address already in use\)/,
    hint: (m) =>
      `port ${m[1]} was already taken when rank 0 opened the rendezvous: a script that fixes ` +
      `MASTER_PORT or a tcp:// init_method collides with other jobs on its node; leave both to ` +
      `goodput (${RENDEZVOUS})`,
  },
  {
    pattern: /Timed out initializing process group in store based barrier.*\(world_size=(\d+), worker_count=(\d+)/,
    hint: (m) =>
      Number(m[2]) > Number(m[1])
        ? `the rendezvous counted ${m[2]} processes for a world of ${m[1]}: it still holds an ` +
          `earlier attempt's, as a file rendezvous (init_method="file://...") left behind by a ` +
          `stopped or killed process does; use init_method="env://" (${RENDEZVOUS})`
        : undefined,
  },
  {
    pattern: /KeyError: '((?:SLURM|OMPI_COMM_WORLD|PMIX?|MV2)_\w+)'/,
    hint: (m) =>
      `the script reads ${m[1]}, which another launcher (srun, mpirun) sets; goodput sets ` +
      `torchrun's variables instead: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT`,
  },
  {
    pattern: /Torch not compiled with CUDA enabled/,
    hint: () =>
      `the script asks for CUDA, but the torch of the Python that ran it is a CPU build: on CPU ` +
      `slots pick the device with torch.cuda.is_available(); on GPUs run the job with a Python ` +
      `whose torch has CUDA (its full path, --venv DIR or --conda DIR)`,
  },
  {
    // A truncated zip (torch >= 1.6's format) or an empty file, read by torch.load.
    pattern: /PytorchStreamReader failed reading zip archive|^EOFError: Ran out of input/,
    hint: (m, tail) =>
      m[0].startsWith('EOFError') && !tail.includes('serialization.py')
        ? undefined
        : `a checkpoint the script loads with torch.load is truncated or empty, as a stop or a kill ` +
          `in the middle of torch.save leaves it, and every restart would fail on it: save to a ` +
          `temporary file and os.replace() it into place (the SDK's checkpoints are written so), and ` +
          `move the broken file away to resume from an earlier one`,
  },
  {
    // torch.save's writer reports a short write as a position mismatch, or as a failed write.
    pattern:
      /\[Errno 28\] No space left on device|PytorchStreamWriter failed writing file|enforce fail at inline_container\.cc:\d+\] \. unexpected pos \d+ vs \d+/,
    hint: () =>
      `a write failed because a disk is full (or a quota is reached): free space where the ` +
      `script writes its checkpoints and outputs (df -h on the node), or point them elsewhere; ` +
      `goodput keeps the checkpoints of ended jobs for --checkpoint-retention-h hours`,
  },
  {
    // torch.topk (or kthvalue) over a batch shorter than k: NCF-style evaluation at several replicas.
    pattern: /RuntimeError: (?:selected index k out of range|k \(\d+\) is too big for dimension)/,
    hint: () =>
      `a per-batch operation (torch.topk) got fewer items than it asks for: a batch shorter than ` +
      `the code assumes. With several replicas each reads only its share of a training batch ` +
      `(batch_size / replicas); an evaluation loader (AdaptiveDataLoader(train=False)) reads ` +
      `whole batches as a plain DataLoader cuts them, but a DistributedSampler or an older SDK ` +
      `splits them, and a data set whose size is no multiple of the batch ends on a short one: ` +
      `take topk over min(k, len(batch)), or group what must stay together in one sample`,
  },
  {
    pattern: /Distributed package doesn't have NCCL built in/,
    hint: () =>
      `backend "nccl" needs a torch with CUDA and GPUs; on CPU slots use "gloo": ` +
      `dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")`,
  },
];

/**
 * What to do about the failure `log_tail` (the last lines of the failed replica's log) shows,
 * or undefined when it shows none of the known ones. The last matching line decides: an
 * earlier attempt's error higher up in the same log is older news.
 */
export function failureHint(log_tail: string): string | undefined {
  const lines = log_tail.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    for (const known of KNOWN) {
      const m = known.pattern.exec(lines[i]!);
      const hint = m ? known.hint(m, log_tail) : undefined;
      if (hint !== undefined) return hint;
    }
  }
  return undefined;
}
