/**
 * The one read of a job's code at submit: its Python script and the local modules it imports,
 * followed as Python would find them next to the script (its own folder and packages; never
 * site-packages, which is not next to it). Everything admission decides (SDK or plain, what
 * conflicts with goodput's launch) reads these texts; nothing reads the files again.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { pythonScript } from '../core/profile-key.js';
import type { JobSpec } from '../store/types.js';

/** One file of the job's code. */
export interface SourceFile {
  /** As shown to the user: the script as the command names it, a module relative to the script's folder. */
  name: string;
  /** The text (comments are kept: the rules strip them). */
  text: string;
}

/** The job's code as read at submit; `too_large` when the script itself exceeds MAX_SCRIPT_BYTES. */
export interface JobSource {
  /** The script's path on this machine. */
  path: string;
  /** The script first, then the local modules it imports (breadth first). */
  files: SourceFile[];
  too_large: boolean;
}

/** Scripts larger than this are not read (they are treated as not importing the SDK). */
const MAX_SCRIPT_BYTES = 4 << 20;
/** Local modules followed at most, and their bytes together: a vendored library stops here. */
const MAX_MODULES = 64;
const MAX_TOTAL_BYTES = 16 << 20;

/** Where the job's Python script is on this machine, or undefined when it runs none (`python -m`, a binary). */
export function scriptPath(spec: Pick<JobSpec, 'command' | 'workdir'>): string | undefined {
  const script = pythonScript(spec.command);
  if (script === undefined) return undefined;
  return isAbsolute(script) ? script : join(spec.workdir, script);
}

function readSmall(path: string, limit: number): string | 'too-large' | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return undefined;
    return stat.size > limit ? 'too-large' : readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The modules a file imports, as dotted names relative to `root` (the script's folder): absolute
 * imports (`import a.b`, `from a.b import c`: `a.b` and `a.b.c`, which may be a submodule) and
 * relative ones resolved against the importing module's package (`from .trainer import T`).
 */
export function importedModules(text: string, module: string): string[] {
  const pkg = module.split('.').slice(0, -1);
  const out: string[] = [];
  const source = text.replace(/\\\n/g, ' ');
  for (const raw of source.split('\n')) {
    const line = raw.replace(/#.*/, '');
    const plain = /^\s*import\s+(.+)$/.exec(line);
    if (plain) {
      for (const item of plain[1]!.split(',')) {
        const name = item
          .trim()
          .split(/\s+as\s+/)[0]!
          .trim();
        if (/^[\w.]+$/.test(name)) out.push(name);
      }
      continue;
    }
    const from = /^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([^)]*)\)?/.exec(line);
    if (!from) continue;
    const dots = from[1]!.length;
    const parent = pkg.slice(0, Math.max(0, pkg.length - (dots - 1)));
    const base = dots === 0 ? from[2]! : [...parent, ...(from[2] ? [from[2]] : [])].join('.');
    if (dots > 0 && dots - 1 > pkg.length) continue; // beyond the top package
    if (base !== '') out.push(base);
    for (const item of from[3]!.split(',')) {
      const name = item
        .trim()
        .split(/\s+as\s+/)[0]!
        .trim();
      if (/^\w+$/.test(name)) out.push(base === '' ? name : `${base}.${name}`);
    }
  }
  return out;
}

/**
 * Reads the job's script and the local modules it imports (MAX_MODULES, MAX_TOTAL_BYTES at most);
 * undefined when the job runs no Python script, or this machine cannot read it.
 */
export function readJobSource(spec: Pick<JobSpec, 'command' | 'workdir'>): JobSource | undefined {
  const path = scriptPath(spec);
  if (path === undefined) return undefined;
  const text = readSmall(path, MAX_SCRIPT_BYTES);
  if (text === undefined) return undefined;
  const shown = pythonScript(spec.command)!;
  if (text === 'too-large') return { path, files: [], too_large: true };
  const root = dirname(path);
  const files: SourceFile[] = [{ name: shown, text }];
  const seen = new Set<string>([path]);
  let total = text.length;
  const queue: { text: string; module: string }[] = [{ text, module: '__main__' }];
  while (queue.length > 0 && files.length <= MAX_MODULES && total <= MAX_TOTAL_BYTES) {
    const current = queue.shift()!;
    for (const module of importedModules(current.text, current.module)) {
      const parts = module.split('.');
      // Importing a.b.c runs a/__init__.py and a/b/__init__.py first, then a/b/c.py or a/b/c/__init__.py.
      const candidates: [string, string][] = parts.slice(0, -1).map((_, k) => {
        const pkg = parts.slice(0, k + 1);
        return [join(root, ...pkg, '__init__.py'), `${pkg.join('.')}.__init__`];
      });
      candidates.push([`${join(root, ...parts)}.py`, module]);
      candidates.push([join(root, ...parts, '__init__.py'), `${module}.__init__`]);
      for (const [candidate, name] of candidates) {
        if (seen.has(candidate)) continue;
        seen.add(candidate);
        const found = readSmall(candidate, MAX_SCRIPT_BYTES);
        if (typeof found !== 'string') continue;
        files.push({ name: relative(root, candidate), text: found });
        total += found.length;
        queue.push({ text: found, module: name });
      }
    }
  }
  return { path, files, too_large: false };
}
