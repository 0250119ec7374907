/** Helpers of the `goodput profile` / `goodput plan` end-to-end tests (src/cli/e2e-profile-*.test.ts). */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { packagePath } from '../../src/util/package-root.js';
import { contractEnv } from '../../src/backends/contract-env.js';
import { PROFILE_JOB_ID } from '../../src/cli/profile/collector.js';
import { CLI } from '../control/harness.js';

/** Debian's python3 (the one with torch). */
export const PYTHON = '/usr/bin/python3';
export const DIGITS = packagePath('examples', 'digits', 'train.py');
export const CNN = packagePath('examples', 'cnn', 'train.py');

/** What a CLI run printed and how it ended. */
export interface Ran {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `onStderr` may act on the child as stderr arrives. */
export function cli(
  args: readonly string[],
  env: Record<string, string>,
  onStderr?: (text: string, kill: () => void) => void,
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, () => child.kill('SIGINT'));
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/** The part of `goodput plan --json` the tests read. */
export interface PlanJson {
  key: string;
  rows: {
    gpu_type: string;
    gpus: number;
    source: string;
    samples_per_s: number;
    time_s: number | null;
    cost: number | null;
    fits: boolean;
    time_interval_s: [number, number];
    memory_per_gpu_bytes: number | null;
    memory_note?: string;
  }[];
  answers: {
    fastest_within_budget: { gpus: number } | null;
    cheapest_within_deadline: { gpus: number } | null;
    knee: { gpu_type: string; gpus: number }[];
  };
  notes: string[];
}

/** A local port nothing listens on (bound, then released). */
export function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const torch = spawnSync(PYTHON, ['-c', 'import torch, sklearn'], { encoding: 'utf8' });
/** Why the real-PyTorch cases skip, or false when Debian's python3 has torch and sklearn. */
export const skip = torch.status !== 0 ? `no torch/sklearn in ${PYTHON}` : false;

/**
 * The names of every variable of the job contract a rank of a profile run gets on `gpu_type`, by
 * the one builder every backend uses (backends/contract-env.ts): what a profile replica must see.
 */
export function contractVariableNames(gpu_type: string): string[] {
  const contract = contractEnv({
    ...{ job_id: PROFILE_JOB_ID, attempt: 0, rank_nodes: ['n'], master_addr: '', master_port: 0, api_url: '' },
    ...{ token: '', checkpoint_dir: '', restarts: 0, max_restarts: 0, gpu_type, preset: () => false },
  });
  return [...Object.keys(contract.common), ...Object.keys(contract.ranks[0]!)];
}
