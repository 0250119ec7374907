/** The check that the job directories are on a file system every node sees at the same path. */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputError } from '../../core/errors.js';
import { slurmRun } from './slurm-cli.js';

/** Where and how the probe job runs. */
export interface SharedDirCheck {
  dir: string;
  nodes: readonly string[];
  partition?: string;
  account?: string;
  qos?: string;
  env?: Readonly<Record<string, string>>;
  /** Seconds to wait for the probe's allocation before giving up (not an error). Default 60. */
  wait_s?: number;
}

/** Outcome: verified, or not verifiable now (the cluster had no room for the probe). */
export type SharedDirResult = { verified: true } | { verified: false; reason: string };

/**
 * Writes a probe file with a random token into `dir` and reads it back with one tiny task on each
 * node (srun). Throws E_SHARED_FS, naming the nodes that cannot read it and what to change,
 * when the directory is not shared; returns `verified: false` when the probe could not run.
 */
export async function checkSharedDir(c: SharedDirCheck): Promise<SharedDirResult> {
  if (c.nodes.length === 0) return { verified: false, reason: 'no usable node to run the probe on' };
  const token = randomBytes(8).toString('hex');
  const probe = join(c.dir, `.shared-probe-${token}`);
  writeFileSync(probe, token + '\n', { mode: 0o644 });
  try {
    const args = [
      `--nodes=${c.nodes.length}`,
      `--nodelist=${c.nodes.join(',')}`,
      '--ntasks-per-node=1',
      `--immediate=${c.wait_s ?? 60}`,
      '--time=2',
      '--job-name=goodput-shared-dir-probe',
      '--quiet',
      ...(c.partition ? [`--partition=${c.partition}`] : []),
      ...(c.account ? [`--account=${c.account}`] : []),
      ...(c.qos ? [`--qos=${c.qos}`] : []),
      '/bin/sh',
      '-c',
      'echo "$SLURMD_NODENAME $(cat "$0" 2>/dev/null || echo unreadable)"',
      probe,
    ];
    let out: string;
    try {
      out = (await slurmRun('srun', args, { env: c.env ?? {} })).stdout;
    } catch (error) {
      return { verified: false, reason: (error as Error).message };
    }
    const seen = new Map(
      out
        .trim()
        .split('\n')
        .map((l) => l.trim().split(' ') as [string, string]),
    );
    const missing = c.nodes.filter((n) => seen.get(n) !== token);
    if (missing.length > 0) {
      throw new GoodputError(
        'E_SHARED_FS',
        `node(s) ${missing.join(', ')} cannot read ${probe}: the data directory ${c.dir} must be ` +
          `on a file system every node mounts at the same path (NFS, Lustre, GPFS, ...). Pass ` +
          `--data-dir on such a file system (e.g. under your home or project directory).`,
      );
    }
    return { verified: true };
  } finally {
    rmSync(probe, { force: true });
  }
}
