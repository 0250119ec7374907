/**
 * Which Python a job's replicas will run, checked at submit (issue 52): a pyenv or conda
 * `python3` first on the server's PATH may shadow the one with torch, and the job then fails at
 * its first line with ModuleNotFoundError. When the server runs on this machine (a loopback
 * URL) and its environment is readable (/proc/PID/environ, same user), the check resolves the
 * command's interpreter as a replica would (the job's venv or conda prefix first, then the
 * server's PATH) and asks it whether it finds torch when the script imports it,
 * without importing them. It says nothing when it cannot tell (a remote server, an env_setup
 * step, no Python script). Kept apart from submit's other notes on purpose.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { scriptPath } from '../../admission/script-source.js';
import { isLoopback } from '../../server/server.js';
import type { JobSpec } from '../../store/types.js';

const PYTHON = /^python(\d+(\.\d+)*)?$/;

/** The server's PATH, from its process's environment (server.json's pid); undefined when unreadable. */
export function serverPath(data_dir: string, server_url: string): string | undefined {
  try {
    // URL writes an IPv6 host in brackets ([::1]); isLoopback reads the bare address.
    if (!isLoopback(new URL(server_url).hostname.replace(/^\[(.*)\]$/, '$1'))) return undefined;
    const { pid, url } = JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as {
      pid?: number;
      url?: string;
    };
    if (url !== server_url || typeof pid !== 'number') return undefined;
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return environ.find((e) => e.startsWith('PATH='))?.slice(5);
  } catch {
    return undefined;
  }
}

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
  let text: string;
  try {
    text = readFileSync(script, 'utf8');
  } catch {
    return [];
  }
  return ['torch'].filter((m) => new RegExp(`^\\s*(import|from)\\s+${m}\\b`, 'm').test(text));
}

/**
 * A warning when the interpreter a replica of `spec` would run lacks a module its script
 * imports; undefined when it has them or nothing can be told. `path`: the server's PATH.
 */
export function interpreterNote(
  spec: Pick<JobSpec, 'command' | 'workdir' | 'venv' | 'conda' | 'env_setup'>,
  path: string,
): string | undefined {
  const first = spec.command[0];
  if (first === undefined || spec.env_setup !== undefined || !PYTHON.test(first.split('/').pop()!)) return undefined;
  const script = scriptPath(spec);
  const needed = script === undefined ? [] : neededModules(script);
  if (needed.length === 0) return undefined;
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
  const probe = spawnSync(
    python,
    [
      '-c',
      `import importlib.util, sys; print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))`,
      ...needed,
    ],
    {
      cwd: spec.workdir,
      encoding: 'utf8',
      timeout: 15_000,
      env: { ...process.env, PATH: search },
    },
  );
  if (probe.status !== 0) return undefined; // could not tell
  const missing = probe.stdout
    .trim()
    .split(/\s+/)
    .filter((m) => m !== '');
  if (missing.length === 0) return undefined;
  const where = prefix === undefined ? "the first on the server's PATH" : `from ${prefix}`;
  return (
    `warning: the replicas' ${first} is ${python} (${where}), which has no ` +
    `${missing.join(', ')}, but ${script} imports it: the job would fail at its first line ` +
    `(ModuleNotFoundError). A pyenv or conda python3 may shadow the one with torch: submit ` +
    `with --venv DIR (e.g. made by /usr/bin/python3 -m venv --system-site-packages DIR) or ` +
    `--conda PREFIX, or give the interpreter's full path (-- /usr/bin/python3 ...).`
  );
}
