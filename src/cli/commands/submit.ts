import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { GoodputClient, JobSpecInput, SubmittedJob } from '../../client/client.js';
import { connect, connectionFlags } from '../../client/connect.js';
import { readJobSpecDocument, validateJobSpec } from '../../admission/job-spec-file.js';
import { GoodputError, usageError } from '../../core/errors.js';
import type { JobSpec } from '../../store/types.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';
import { checkMissingDashDash, checkQuotedCommand } from '../job-command.js';
import { unwrapLauncherCommand } from '../../admission/torchrun-python.js';

/** Flags that describe a job (shared by `submit` and `run`). */
export const jobFlags = {
  name: { type: 'string', short: 'J' },
  'min-replicas': { type: 'string' },
  'max-replicas': { type: 'string', short: 'n' },
  'max-restarts': { type: 'string' },
  priority: { type: 'string' },
  workdir: { type: 'string' },
  env: { type: 'string', multiple: true, short: 'e' },
  venv: { type: 'string' },
  conda: { type: 'string' },
  'env-setup': { type: 'string' },
  user: { type: 'string' },
  'not-preemptible': { type: 'boolean' },
  preemptible: { type: 'boolean' },
  'batch-size': { type: 'string' },
  'batch-size-cap': { type: 'string' },
  profile: { type: 'string' },
  resumable: { type: 'boolean' },
  sdk: { type: 'boolean' },
  'no-sdk': { type: 'boolean' },
  'no-script-check': { type: 'boolean' },
} as const;

type JobFlagValues = {
  [K in keyof typeof jobFlags]?: (typeof jobFlags)[K] extends { multiple: true }
    ? string[]
    : (typeof jobFlags)[K]['type'] extends 'boolean'
      ? boolean
      : string;
};

/** Splits argv at the first `--`: [flags, command]. */
export function splitCommand(argv: readonly string[]): [string[], string[] | undefined] {
  const i = argv.indexOf('--');
  return i === -1 ? [[...argv], undefined] : [argv.slice(0, i), argv.slice(i + 1)];
}

/** The spec from a file and/or flags (flags win), validated; every bad field is named. */
export function specFromFlags(
  cmd: string,
  values: JobFlagValues,
  file: string | undefined,
  command: string[] | undefined,
): JobSpec {
  const cwd = process.cwd();
  const base: Record<string, unknown> = file ? readJobSpecDocument(file, cwd) : {};
  if (command) base.command = command;
  if (base.command === undefined) {
    if (file)
      throw new GoodputError(
        'E_SPEC',
        `${file} is invalid: command: missing (a list such as [python3, train.py]); or give the command after '--'`,
      );
    throw usageError(`${cmd}: give a spec file or a command after '--'. See 'goodput ${cmd} --help'.`);
  }
  const num = (flag: keyof JobFlagValues, key: string, min: number) => {
    const v = values[flag];
    if (typeof v === 'string') base[key] = numberFlag(cmd, flag, v, 0, { integer: true, min });
  };
  num('min-replicas', 'min_replicas', 0);
  num('max-replicas', 'max_replicas', 1);
  num('max-restarts', 'max_restarts', 0);
  if (Array.isArray(base.command) && base.command.every((a) => typeof a === 'string'))
    unwrapLauncher(cmd, base, values);
  if (values.name !== undefined) base.name = values.name;
  const program = Array.isArray(base.command) && typeof base.command[0] === 'string' ? base.command[0] : 'job';
  base.name ??= sanitizeName(basename(program));
  num('priority', 'priority', -1000);
  num('batch-size', 'fixed_batch_size', 1);
  num('batch-size-cap', 'batch_size_cap', 1);
  if (values.workdir !== undefined) base.workdir = resolve(values.workdir);
  if (values.venv !== undefined) base.venv = resolve(values.venv);
  if (values.conda !== undefined) base.conda = resolve(values.conda);
  if (values['env-setup'] !== undefined) base.env_setup = values['env-setup'];
  if (values.user !== undefined) base.user = values.user;
  if (values.profile !== undefined) base.profile = values.profile;
  if (values['not-preemptible'] && values.preemptible)
    throw usageError(`${cmd}: --preemptible and --not-preemptible contradict each other`);
  if (values['not-preemptible']) base.preemptible = false;
  if (values.preemptible) base.preemptible = true;
  if (values.sdk && values['no-sdk']) throw usageError(`${cmd}: --sdk and --no-sdk contradict each other`);
  if (values.sdk) base.sdk = true;
  if (values['no-sdk']) base.sdk = false;
  if (values.resumable) base.resumable = true;
  if (values['no-script-check']) base.check_script = false;
  if (values.env) {
    const env: Record<string, string> = { ...((base.env as Record<string, string> | undefined) ?? {}) };
    for (const kv of values.env) {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw usageError(`${cmd}: --env expects NAME=VALUE, got '${kv}'`);
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    base.env = env;
  }
  const spec = validateJobSpec(base, cwd, file ?? 'job spec');
  checkQuotedCommand(cmd, spec.command, spec.workdir);
  const prefix = spec.venv ?? spec.conda;
  if (prefix !== undefined && spec.env_setup === undefined && !existsSync(prefix)) {
    console.error(
      `goodput: warning: ${spec.venv ? 'venv' : 'conda environment'} ${prefix} does not exist on ` +
        `this machine; replicas will fail unless it exists where they run (or give --env-setup to ` +
        `create it)`,
    );
  }
  return spec;
}

/**
 * A `torchrun ...` command (file or flags) becomes one rank's command; torchrun's rank count
 * becomes -n and its --max_restarts the job's, unless given: a different -n is a usage error.
 */
function unwrapLauncher(cmd: string, base: Record<string, unknown>, values: JobFlagValues): void {
  // The job's environment prefix as validateJobSpec will resolve it: a flag against the current
  // directory, a spec file's field against the workdir.
  const flag = values.venv ?? values.conda;
  const field = typeof base.venv === 'string' ? base.venv : typeof base.conda === 'string' ? base.conda : undefined;
  const workdir = values.workdir ?? (typeof base.workdir === 'string' ? base.workdir : '.');
  const prefix = flag !== undefined ? resolve(flag) : field !== undefined ? resolve(workdir, field) : undefined;
  const unwrapped = unwrapLauncherCommand(cmd, base.command as string[], prefix);
  if (unwrapped === undefined) return;
  let note = unwrapped.note;
  if (unwrapped.ranks !== undefined) {
    if (base.max_replicas === undefined) {
      base.max_replicas = unwrapped.ranks;
      note += `; -n ${unwrapped.ranks} from --nnodes x --nproc_per_node`;
    } else if (base.max_replicas !== unwrapped.ranks) {
      throw usageError(
        `${cmd}: -n ${String(base.max_replicas)} disagrees with the launcher's ${unwrapped.ranks} ` +
          `rank(s) (--nnodes x --nproc_per_node); give one of them`,
      );
    }
  }
  if (unwrapped.max_restarts !== undefined) base.max_restarts ??= unwrapped.max_restarts;
  base.command = unwrapped.command;
  console.error(note);
}

function sanitizeName(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned.slice(0, 63) || 'job';
}

const options = { ...connectionFlags, ...jobFlags, json: { type: 'boolean' } } as const;

export const submitCommand: CliCommand = {
  name: 'submit',
  options,
  help: `Usage: goodput submit <spec.yaml|spec.json> [options] [-- <command> [args...]]
       goodput submit [options] -- <command> [args...]

Job options (override the spec file, or complete it: a file may leave out the name or the
command):
  -J, --name N           job name (default: the program's name)
  --min-replicas N       replicas the job needs to run at all (default 0)
  -n, --max-replicas N   most replicas (GPUs) the job may get (default 1); for a plain
                         script, exactly N processes (see --sdk)
  --max-restarts N       restarts after replica failures (default 3)
  --priority N           larger runs first where the policy honours it (default 0)
  --workdir DIR          working directory (default: current directory)
  -e, --env NAME=VALUE   environment variable (repeatable)
  --venv DIR             run in this Python venv: DIR/bin first on PATH, VIRTUAL_ENV set
                         (e.g. one made by /usr/bin/python3 -m venv --system-site-packages DIR)
  --conda DIR            run in this conda environment prefix (CONDA_PREFIX, DIR/bin on PATH)
  --env-setup SCRIPT     shell script run once per job and node, in the workdir, before the
                         replicas there start (e.g. creating the venv); spec field env_setup
  --user U               owner (admin token only)
  --not-preemptible      keep its GPUs once placed
  --preemptible          may be stopped even before it can save its progress (by default a
                         running job that has never checkpointed keeps its GPUs: a stop would
                         lose all its work; see docs/contract.md)
  --resumable            a plain script that resumes from its own snapshot (torchrun-elastic
                         style): it may be resized between --min-replicas and -n and
                         preempted; spec field resumable
  --sdk / --no-sdk       the script reports (or not) through the Goodput SDK; default: a Python
                         script that imports goodput does. A plain script (no SDK) runs as a
                         gang: -n N starts N processes together, as torchrun --nproc_per_node N,
                         queued until N devices are free and never resized (docs/contract.md)
  --no-script-check      do not check that the Python script exists in the workdir on the
                         server (a script that exists only on the compute nodes)
  --batch-size B         fixed total batch size (no adaptive batch size)
  --batch-size-cap B     cap on adaptive batch-size growth
  --profile KEY          profile key (spec field profile): jobs of one key share what they
                         measured, so a rerun starts at its efficient size. Default: the
                         script or module name, arguments ignored (python3 train.py --seed 1
                         -> train; python -m pkg.train -> pkg.train; torchrun/accelerate/env
                         and interpreter options skipped); 'goodput profiles' lists them
Other:
  --json                 print the job as JSON
  --data-dir DIR | --server URL, --token T   which server (default: ~/.goodput)

The command is an argv array: arguments are passed literally, never through a shell. Which
'python3' runs is the environment's (--venv/--conda), else the first on the server's PATH.
Goodput starts one process per rank itself, as torchrun does: a command that starts through
torchrun (torchrun --nproc_per_node 2 train.py) is run as its workers run it (the Python on
torchrun's first line, then train.py), with -n from --nnodes x --nproc_per_node
(docs/contract.md, "torchrun commands").`,
  async run(argv) {
    const [flagArgs, command] = splitCommand(argv);
    checkMissingDashDash('submit', flagArgs, options, true);
    const { values, positionals } = parseFlags('submit', flagArgs, options);
    if (positionals.length > 1)
      throw usageError("submit: expected at most one spec file (put the command after '--').");
    const spec = specFromFlags('submit', values, positionals[0], command);
    const client = connect(values);
    const job = await submitWithRetries(client, spec);
    console.log(values.json ? JSON.stringify(job, null, 2) : `submitted job ${job.id} (${job.name})`);
    // Admission's notes come with the answer (admission/), the interpreter check's included:
    // nothing more to ask or read here.
    for (const line of job.notes ?? []) console.error(`goodput: ${line}`);
    return 0;
  },
};

/** Attempts of a submit whose answer was lost (the server unreachable or restarting). */
const SUBMIT_ATTEMPTS = 4;

/**
 * Submits with one idempotency key for every attempt, so a retry after a lost answer returns the
 * job the first attempt created instead of a second one.
 */
async function submitWithRetries(client: GoodputClient, spec: JobSpecInput): Promise<SubmittedJob> {
  const idempotency_key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.submit(spec, { idempotency_key });
    } catch (error) {
      const retriable =
        error instanceof GoodputError &&
        (error.code === 'E_SERVER_DOWN' || error.code === 'E_STORE_DAMAGED' || error.code === 'E_INTERNAL');
      if (!retriable || attempt >= SUBMIT_ATTEMPTS) throw error;
      console.error(`goodput: submit failed (${error.message}); retrying (${attempt}/${SUBMIT_ATTEMPTS - 1})`);
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}
