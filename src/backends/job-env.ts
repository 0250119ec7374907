/**
 * The environment a job's replicas run in (spec fields `venv`, `conda`, `env_setup`), turned into
 * the argv and variables a backend execs for each replica. Backend-neutral and pure: the local
 * backend execs the plan once per replica process, a cluster backend once per task; the setup
 * step runs once per job and node whatever the backend.
 */

/** The environment fields of a job spec (all optional; `venv` and `conda` exclusive). */
export interface JobEnvironment {
  /** Absolute prefix of a Python virtual environment (`python3 -m venv DIR`). */
  venv?: string;
  /** Absolute prefix of a conda environment (`conda create -p DIR`). */
  conda?: string;
  /** Shell script run once per job and node, in the workdir, before the replicas there start. */
  env_setup?: string;
}

/** What a backend execs for one replica: the argv (never parsed by a shell) and its variables. */
export interface ExecPlan {
  command: string[];
  env: Record<string, string>;
}

/** Where the setup step keeps its per-node markers, and which attempt is starting. */
export interface SetupState {
  /** Job-private directory, visible to every replica of the job on a node (shared or not). */
  state_dir: string;
  attempt: number;
}

/** Exit status of a replica whose environment does not exist (as a shell's "not found"). */
export const EXIT_NO_ENVIRONMENT = 127;

/**
 * The prelude, a constant script (arguments are positional parameters, never parsed by the
 * shell): $1 state dir, $2 attempt, $3 setup script or '', $4 environment prefix or '', $5 its
 * kind, then the job's argv. The first replica on a node to take the per-attempt lock (mkdir is
 * atomic) runs the setup; the others wait for its `.done` marker, or exit with its status when it
 * failed. A lock left by a killed attempt never blocks the next one (the lock names the attempt).
 * The prelude then `exec`s the program, so signals reach it directly.
 */
const PRELUDE = [
  'd=$1 a=$2 s=$3 p=$4 k=$5; shift 5',
  'if [ -n "$s" ]; then',
  '  n=$(uname -n); ok="$d/env-setup-$n.done"; bad="$d/env-setup-$n-$a.failed"',
  '  while [ ! -e "$ok" ]; do',
  '    if [ -e "$bad" ]; then r=$(cat "$bad"); echo "goodput: env_setup failed on $n with ' +
    'exit status $r (its output is above, in the log of the replica that ran it)" >&2; exit ' +
    '"$r"; fi',
  '    if mkdir "$d/env-setup-$n-$a.lock" 2>/dev/null; then',
  '      echo "goodput: running env_setup on $n" >&2',
  '      /bin/sh -c "$s" goodput-env-setup; r=$?',
  '      if [ "$r" -eq 0 ]; then : > "$ok"; else echo "$r" > "$bad.tmp" && mv -f "$bad.tmp" "$bad"; fi',
  '    else sleep 0.2; fi',
  '  done',
  'fi',
  'if [ -n "$p" ] && [ ! -d "$p/bin" ]; then',
  '  echo "goodput: the job\'s $k $p does not exist here (no $p/bin): create it first, e.g. ' +
    '/usr/bin/python3 -m venv --system-site-packages $p, or give the job an env_setup step ' +
    'that does" >&2',
  `  exit ${EXIT_NO_ENVIRONMENT}`,
  'fi',
  'exec "$@"',
].join('\n');

/** Whether the spec names any environment (otherwise the command runs as given). */
export function hasEnvironment(e: JobEnvironment): boolean {
  return e.venv !== undefined || e.conda !== undefined || e.env_setup !== undefined;
}

/**
 * The argv and variables of one replica in the job's environment. Without environment fields the
 * command and `env` come back unchanged. A venv or conda prefix comes first on PATH (so `python3`
 * means its interpreter) with VIRTUAL_ENV or CONDA_PREFIX set and PYTHONHOME unset, as their
 * activation scripts do (conda's `activate.d` hooks are not run). Pure.
 */
export function execPlan(
  e: JobEnvironment,
  command: readonly string[],
  env: Readonly<Record<string, string>>,
  state: SetupState,
): ExecPlan {
  if (!hasEnvironment(e)) return { command: [...command], env: { ...env } };
  const out: Record<string, string> = { ...env };
  const prefix = e.venv ?? e.conda;
  if (prefix !== undefined) {
    out.PATH = `${prefix}/bin:${env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`;
    delete out.PYTHONHOME;
    if (e.venv !== undefined) out.VIRTUAL_ENV = prefix;
    else Object.assign(out, { CONDA_PREFIX: prefix, CONDA_DEFAULT_ENV: prefix });
  }
  const kind = e.venv !== undefined ? 'venv' : 'conda environment';
  return {
    command: [
      '/bin/sh',
      '-c',
      PRELUDE,
      'goodput-env',
      state.state_dir,
      String(state.attempt),
      e.env_setup ?? '',
      prefix ?? '',
      kind,
      ...command,
    ],
    env: out,
  };
}
