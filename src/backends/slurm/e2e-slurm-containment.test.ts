/**
 * Containment on the Slurm backend (real slurmctld and slurmd): a replica's `setsid` child, which
 * the test cluster's proctrack/pgid does not follow, ends with the replica, whether the program
 * exits by itself or Goodput cancels it. The task wrapper's sweep (batch-script.ts SWEEP_MARKED)
 * kills what still carries the rank's markers before it records the exit.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LaunchRequest, ReplicaExit } from '../backend.js';
import { markedProcesses, sweepMarked } from '../local/containment.js';
import { runFileBase } from '../run-files.js';
import { SlurmBackend } from './slurm-backend.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';
import { waitFor } from '../../../test-support/control/harness.js';
import { launchRequestFixture } from '../testing/launch-request.js';

/** The command lines of the live processes that carry the markers of `job_id`'s attempt 0. */
const escaped = (job_id: string): string[] =>
  markedProcesses(job_id, 0)
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      } catch {
        return '';
      }
    })
    .filter((c) => c !== '');

describe("Slurm backend: a job's processes end with it", { skip: slurmMissing() }, () => {
  let cluster: SlurmCluster;
  let root: string;
  let backend: SlurmBackend;
  const exits: ReplicaExit[] = [];
  const keepAlive = setInterval(() => {}, 1000);
  before(async () => {
    cluster = await startSlurmCluster({ nodes: 1, gpus_per_node: 2 });
    root = mkdtempSync(join(tmpdir(), 'goodput-contain-'));
    backend = new SlurmBackend({ name_prefix: 'goodput-contain', env: cluster.env, poll_ms: 250 });
    await backend.refresh();
    backend.onExit((e) => exits.push(e));
  });
  after(async () => {
    clearInterval(keepAlive);
    // A failing run must not leave its escaped sleeps behind.
    for (const id of ['exits', 'cancelled']) sweepMarked(id, 0);
    backend?.close();
    await cluster?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** One rank on the node running `script` (sh -c) as job `job_id`. */
  const launch = async (job_id: string, script: string): Promise<{ req: LaunchRequest; slurm_id: string }> => {
    const req = launchRequestFixture(root, job_id, ['/bin/sh', '-c', script]);
    const [first] = await backend.launch(req);
    return { req, slurm_id: first!.launch_id };
  };
  /** Waits up to 3 s for no marked process of `job_id` to be left; returns those left. */
  const settle = async (job_id: string): Promise<string[]> => {
    for (let i = 0; i < 30 && escaped(job_id).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    return escaped(job_id);
  };
  // The sleeps' arguments mark them in the process list; their output goes nowhere so that
  // nothing holds the task's log open.
  const child = (marker: number) => `setsid sleep ${marker} </dev/null >/dev/null 2>&1 &`;

  it('a program that exits by itself leaves no setsid child behind', { timeout: 120_000 }, async () => {
    await launch('exits', `${child(3172)} sleep 1; exit 0`);
    const exit = await waitFor('the exit', 60_000, async () => exits.find((e) => e.job_id === 'exits'));
    assert.equal(exit.exit_code, 0);
    assert.deepEqual(await settle('exits'), [], 'the setsid child ended with its replica');
  });

  it('a cancelled program leaves no setsid child behind', { timeout: 120_000 }, async () => {
    const { req, slurm_id } = await launch('cancelled', `${child(3173)} exec sleep 600`);
    await waitFor('the program to run', 60_000, async () => existsSync(runFileBase(req.job_dir, 0, 0) + '.pid'));
    await waitFor('the setsid child to run', 10_000, async () => escaped('cancelled').some((c) => c === 'sleep 3173'));
    backend.signal(
      {
        job_id: 'cancelled',
        attempt: 0,
        rank: 0,
        node: cluster.nodes[0]!,
        launch_id: slurm_id,
        pid: 0,
        proc_start: '',
        job_dir: req.job_dir,
      },
      'SIGKILL',
    );
    await waitFor('the exit', 60_000, async () => exits.find((e) => e.job_id === 'cancelled'));
    assert.deepEqual(await settle('cancelled'), [], 'the setsid child ended with its replica');
  });
});
