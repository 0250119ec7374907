/**
 * Which Python a job's replicas will run, checked at submit (issue 52): a pyenv or conda
 * `python3` first on the server's PATH may shadow the one with torch, and the job then fails at
 * its first line with ModuleNotFoundError. Where the backend runs replicas on the server's own
 * machine with its environment (`Backend.replicaPath`: the local backend), admission resolves the
 * command's interpreter as a replica would (the job's venv or conda prefix first, then that PATH)
 * and asks it whether it finds the modules the script imports, without importing them. The
 * script's text is admission's one read (admit.ts `readJobCode`); nothing reads it again. It says
 * nothing when it cannot tell (replicas elsewhere, an env_setup step, no Python script).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { JobSpec } from '../store/types.js';
import type { JobSource } from './script-source.js';

const PYTHON = /^python(\d+(\.\d+)*)?$/;
/** How long the interpreter may take to say what it finds (a hung one leaves the note out). */
const PROBE_TIMEOUT_MS = 15_000;

/** The file `name` resolves to on `path` (as execvp would), or undefined. */
function which(name: string, path: string): string | undefined {
  if (name.includes('/')) return name;
  for (const dir of path.split(':')) {
    const file = join(dir || '.', name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  return undefined;
}

/**
 * The modules the script imports that the interpreter must find itself: torch (goodput is often
 * found through a sys.path the script sets, as the examples do, so its absence proves nothing).
 */
function neededModules(script: string): string[] {
  return ['torch'].filter((m) => new RegExp(`^\\s*(import|from)\\s+${m}\\b`, 'm').test(script));
}

/** The modules of `needed` that `python` (run in `cwd` on `path`) does not find; undefined when it cannot tell. */
function missingModules(python: string, needed: string[], cwd: string, path: string): Promise<string[] | undefined> {
  const probe = `import importlib.util, sys; print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))`;
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', probe, ...needed],
      { cwd, encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, env: { ...process.env, PATH: path } },
      (error, stdout) =>
        resolve(
          error
            ? undefined
            : stdout
                .trim()
                .split(/\s+/)
                .filter((m) => m !== ''),
        ),
    );
  });
}

/**
 * A warning when the interpreter a replica of `spec` would run lacks a module its script imports;
 * undefined when it has them or nothing can be told. `source`: admission's read of the job's code;
 * `path`: the PATH replicas run with (the server's).
 */
export async function interpreterNote(
  spec: Pick<JobSpec, 'command' | 'workdir' | 'venv' | 'conda' | 'env_setup'>,
  source: JobSource | undefined,
  path: string,
): Promise<string | undefined> {
  const first = spec.command[0];
  if (first === undefined || spec.env_setup !== undefined || !PYTHON.test(first.split('/').pop()!)) return undefined;
  const text = source === undefined || source.too_large ? undefined : source.files[0]?.text;
  const needed = text === undefined ? [] : neededModules(text);
  if (source === undefined || needed.length === 0) return undefined;
  const prefix = spec.venv ?? spec.conda;
  const search =
    prefix === undefined ? path : `${isAbsolute(prefix) ? prefix : join(spec.workdir, prefix)}/bin:${path}`;
  const python = which(first, search);
  if (python === undefined)
    return (
      `warning: no '${first}' on the server's PATH${prefix ? ` nor in ${prefix}/bin` : ''}: the ` +
      `replicas would fail with exit 127 (command not found). Give the interpreter's full path ` +
      `(-- /usr/bin/python3 ...), or --venv/--conda.`
    );
  const missing = await missingModules(python, needed, spec.workdir, search);
  if (missing === undefined || missing.length === 0) return undefined;
  const where = prefix === undefined ? "the first on the server's PATH" : `from ${prefix}`;
  return (
    `warning: the replicas' ${first} is ${python} (${where}), which has no ` +
    `${missing.join(', ')}, but ${source.path} imports it: the job would fail at its first line ` +
    `(ModuleNotFoundError). A pyenv or conda python3 may shadow the one with torch: submit ` +
    `with --venv DIR (e.g. made by /usr/bin/python3 -m venv --system-site-packages DIR) or ` +
    `--conda PREFIX, or give the interpreter's full path (-- /usr/bin/python3 ...).`
  );
}
