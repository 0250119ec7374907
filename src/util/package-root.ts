import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * Absolute path of the installed `goodput` package (the folder holding its package.json), found
 * by walking up from this module; works from `src/` (tsx) and from `dist/src/` (compiled).
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('goodput package root not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  cached = dir;
  return dir;
}

/** Path of a file shipped with the package, e.g. `packagePath('data', 'pollux')`. */
export function packagePath(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}
