/** Finds the Python interpreter the end-to-end tests run training scripts with. */
import { spawnSync } from 'node:child_process';

/**
 * The first interpreter that imports every module of `modules`: $GOODPUT_TEST_PYTHON, Debian's
 * /usr/bin/python3 (the one scripts/test.sh installs python3-torch for), then PATH's python3.
 * Undefined when none does: the caller skips with `noPython(modules)`.
 */
export function pythonWith(modules: readonly string[] = ['torch']): string | undefined {
  const candidates = [process.env.GOODPUT_TEST_PYTHON, '/usr/bin/python3', 'python3'].filter((c): c is string => !!c);
  return candidates.find((c) => spawnSync(c, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore', timeout: 120_000 }).status === 0);
}

/** The skip reason when no interpreter has `modules`. */
export function noPython(modules: readonly string[] = ['torch']): string {
  const debian = modules.map((m) => (m === 'sklearn' ? 'python3-sklearn' : `python3-${m}`)).join(' ');
  return `no Python with ${modules.join(' and ')} (apt-get install ${debian}, or set GOODPUT_TEST_PYTHON)`;
}
