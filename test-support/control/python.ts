/** Finds the Python interpreter the end-to-end tests run training scripts with. */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The first interpreter that imports every module of `modules`: $GOODPUT_TEST_PYTHON, Debian's
 * /usr/bin/python3 (the one scripts/test.sh installs python3-torch for), then PATH's python3.
 * Undefined when none does: the caller skips with `noPython(modules)`.
 */
export function pythonWith(modules: readonly string[] = ['torch']): string | undefined {
  const candidates = [process.env.GOODPUT_TEST_PYTHON, '/usr/bin/python3', 'python3'].filter((c): c is string => !!c);
  return candidates.find(
    (c) => spawnSync(c, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore', timeout: 120_000 }).status === 0,
  );
}

/** The skip reason when no interpreter has `modules`. */
export function noPython(modules: readonly string[] = ['torch']): string {
  const debian = modules.map((m) => (m === 'sklearn' ? 'python3-sklearn' : `python3-${m}`)).join(' ');
  return `no Python with ${modules.join(' and ')} (apt-get install ${debian}, or set GOODPUT_TEST_PYTHON)`;
}

/**
 * The executable `torchrun` in the directory of `python` (resolved on PATH when it is a bare
 * name), or undefined: the tests' torchrun must run the interpreter that has torch.
 */
export function torchrunBeside(python: string): string | undefined {
  const where = python.includes('/')
    ? python
    : spawnSync('sh', ['-c', `command -v ${python}`], { encoding: 'utf8' }).stdout.trim();
  if (where === '') return undefined;
  const candidate = join(dirname(where), 'torchrun');
  try {
    accessSync(candidate, constants.X_OK);
    return candidate;
  } catch {
    return undefined;
  }
}
