/**
 * Test support for end-to-end tests and benches on the Slurm test cluster
 * (src/backends/slurm/testing/slurm-cluster.ts): the cluster of a describe block with the
 * `goodput up --backend slurm` servers its tests start, and the cluster commands several of them
 * drive (a partition's state, waiting for every Slurm job to be gone).
 */
import { after, before } from 'node:test';
import { slurmMissing, type SlurmCluster } from '../../src/backends/slurm/testing/slurm-cluster.js';
import type { JobDetail } from '../../src/client/client.js';
import { serverSet, waitFor, type TestServers } from '../control/harness.js';
import { noPython, pythonWith } from '../control/python.js';

/** A describe block's Slurm test cluster and the servers its tests run on it. */
export interface SlurmSuite extends TestServers {
  /** The cluster; set by the block's `before` hook, so read it in tests and hooks only. */
  readonly cluster: SlurmCluster;
}

/**
 * Registers, where it is called (a describe block), a `before` that starts the cluster with
 * `start` (e.g. `() => startSlurmCluster({ nodes: 1 })`) and points this process's Slurm
 * commands at it (SLURM_CONF), and an `after` that kills the servers started through the suite,
 * removes their data directories, then stops the cluster (a pooled one is only emptied).
 * `prefix` names the data directories.
 */
export function slurmSuite(start: () => Promise<SlurmCluster>, prefix = 'goodput-slurm-e2e-'): SlurmSuite {
  const servers = serverSet(prefix);
  let cluster: SlurmCluster | undefined;
  before(async () => {
    cluster = await start();
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
  });
  after(async () => {
    servers.cleanupAll();
    await cluster?.stop();
  });
  return {
    ...servers,
    get cluster(): SlurmCluster {
      if (!cluster) throw new Error('the Slurm test cluster is not started yet (read it in a test or hook)');
      return cluster;
    },
  };
}

/**
 * The Python a Slurm test runs its jobs with (one that imports `modules`), and why the test is
 * skipped (`skip` for describe/it): Slurm missing, else no such Python. No Python is looked for
 * without Slurm.
 */
export function pythonOnSlurm(modules: readonly string[] = ['torch']): {
  python: string | undefined;
  skip: string | undefined;
} {
  const missing = slurmMissing();
  if (missing !== undefined) return { python: undefined, skip: missing };
  const python = pythonWith(modules);
  return { python, skip: python ? undefined : noPython(modules) };
}

/** Sets the state of the cluster's partition (`scontrol update PartitionName=... State=...`). */
export function setPartitionState(cluster: SlurmCluster, state: 'UP' | 'DRAIN' | 'DOWN'): Promise<string> {
  return cluster.cmd('scontrol', ['update', `PartitionName=${cluster.partition}`, `State=${state}`]);
}

/**
 * Waits until `squeue` lists no job: a test's Slurm jobs may still be completing after its server
 * is gone (their batch step ends seconds after the tasks), and to the next server on the cluster
 * they would be other users' jobs holding GPUs.
 */
export async function untilNoSlurmJobs(cluster: SlurmCluster, timeout_ms = 60_000): Promise<void> {
  await waitFor('the cluster to be idle', timeout_ms, async () => (await cluster.cmd('squeue', ['-h'])).trim() === '');
}

/**
 * Sends the signal a rescale stops a job with (28, WINCH) to the Slurm job of `job`'s running
 * attempt: the synthetic trainer checkpoints and exits 143, and Goodput relaunches the job.
 */
export function signalRescale(cluster: SlurmCluster, job: JobDetail): Promise<string> {
  const live = job.current_replicas.find((r) => r.exit_code === null);
  if (!live) throw new Error(`job ${job.id} has no running replica to signal`);
  return cluster.cmd('scancel', ['--signal=28', live.launch_id]);
}
