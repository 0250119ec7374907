/**
 * What bench:scale and its companions (scale/restart.ts, hetero.ts) read from their flags: Sia's
 * data directory and the cases' names. A bad value is a usage error (exit 2) with what to give.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Sia's data directory: `given` (--data), else the shared data beside the checkout (../shared) or
 * beside its worktree folder (../../shared). Exits 2 where it has no traces.
 */
export function siaDataDir(given: string | undefined): string {
  const dir = given ?? (existsSync('../shared/data/sia') ? '../shared/data/sia' : '../../shared/data/sia');
  if (!existsSync(join(dir, 'traces'))) {
    console.error(`error: ${dir}/traces: no such directory (give the Sia data directory with --data)`);
    process.exit(2);
  }
  return dir;
}

/** The traces a case of `types` GPU types is generated from: Sia's (`data`, as siaDataDir) for four, none ('') for one. */
export function caseTracesDir(types: 1 | 4, data: string | undefined): string {
  return types === 1 ? '' : join(siaDataDir(data), 'traces');
}

/** A case of bench:scale: one GPU type or four, its GPUs, and 5,000 jobs per 2,048 GPUs. */
export interface ScaleCase {
  types: 1 | 4;
  gpus: number;
  jobs: number;
}

/** The case `name` (one-N or four-N, e.g. one-2048); exits 2 on another name. */
export function scaleCase(name: string): ScaleCase {
  const m = /^(one|four)-(\d+)$/.exec(name.trim());
  if (!m) {
    console.error(`error: --cases: '${name}' is not one-N or four-N (e.g. one-2048)`);
    process.exit(2);
  }
  const gpus = Number(m[2]);
  return { types: m[1] === 'one' ? 1 : 4, gpus, jobs: Math.round((gpus * 5000) / 2048) };
}
