import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputError, usageError } from '../../core/errors.js';
import { numberFlag } from '../command.js';
import type { RunSettings } from '../../sim/run-workload.js';

/** Workload CSV files named by --workload: the file itself, or every *.csv of a directory. */
export function workloadFiles(command: string, path: string | undefined): string[] {
  if (!path)
    throw usageError(`${command}: --workload <csv file | directory> is required. See 'goodput ${command} --help'.`);
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw new GoodputError('E_NOT_FOUND', `--workload ${path}: no such file or directory.`);
  }
  if (!isDir) return [path];
  const files = readdirSync(path)
    .filter((f) => f.toLowerCase().endsWith('.csv'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((f) => join(path, f));
  if (files.length === 0)
    throw new GoodputError('E_NOT_FOUND', `--workload ${path}: the directory has no .csv workload files.`);
  return files;
}

/** Cluster/clock flags shared by `sim` and `compare`. */
export const clusterFlags = {
  interval: { type: 'string' },
  interference: { type: 'string' },
  nodes: { type: 'string' },
  'gpus-per-node': { type: 'string' },
  seed: { type: 'string' },
  'submit-jitter': { type: 'string' },
} as const;

/** Parses the shared cluster/clock flags into run settings for `policy`. */
export function clusterSettings(
  command: string,
  values: Partial<Record<keyof typeof clusterFlags, string | undefined>>,
  policy: string,
): RunSettings {
  const interference = numberFlag(command, 'interference', values.interference, 0, { min: 0 });
  if (interference >= 1)
    throw usageError(`${command}: --interference must be below 1 (a slowdown fraction), got '${values.interference}'.`);
  const gpus_per_node = numberFlag(command, 'gpus-per-node', values['gpus-per-node'], 4, { integer: true, min: 1 });
  if (gpus_per_node > 4)
    throw usageError(
      `${command}: --gpus-per-node must be 1..4 (the traces cover up to 4 GPUs per node), got '${values['gpus-per-node']}'.`,
    );
  return {
    policy,
    seed: numberFlag(command, 'seed', values.seed, 0, { integer: true, min: 0 }),
    interval_s: numberFlag(command, 'interval', values.interval, 60, { integer: true, min: 1 }),
    interference,
    nodes: numberFlag(command, 'nodes', values.nodes, 16, { integer: true, min: 1 }),
    gpus_per_node,
    submit_jitter_s: numberFlag(command, 'submit-jitter', values['submit-jitter'], 0, { min: 0 }),
  };
}
