/**
 * A backend's launch request as the backend tests make it (local and Slurm backends, containment,
 * log caps): one rank of `job_id`'s first attempt, on device 0 of the first node, its job folder
 * under `root`, reporting to an address nothing listens on. Test-only (not shipped: testing/).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { killGroup } from '../local/process-info.js';
import type { LaunchRequest } from '../backend.js';

/** One rank of `job_id` running `command` in `root`; `extra` overrides any field. */
export function launchRequestFixture(
  root: string,
  job_id: string,
  command: string[],
  extra: Partial<LaunchRequest> = {},
): LaunchRequest {
  return {
    job_id,
    attempt: 0,
    command,
    workdir: root,
    env: {},
    devices: [0],
    nodes: [0],
    num_nodes: 1,
    api_url: 'http://127.0.0.1:1',
    token: 'tok',
    job_dir: join(root, job_id),
    ...extra,
  };
}

/** What a backend test started, cleaned up after its file's tests (`backendScratch`). */
export interface BackendScratch {
  /** A fresh folder for the replicas' workdirs and job folders. */
  root: string;
  /** Backends the test opened: closed. */
  backends: { close(): void }[];
  /** Process groups the test started: SIGKILLed. */
  pids: number[];
}

/**
 * A scratch folder named `prefix...` for a backend test, removed after the file's tests with
 * everything the test records in the answer; keeps the event loop alive until then (replica
 * processes are unref'd by design: they outlive the server).
 */
export function backendScratch(prefix: string): BackendScratch {
  const scratch: BackendScratch = { root: mkdtempSync(join(tmpdir(), prefix)), backends: [], pids: [] };
  const keepAlive = setInterval(() => {}, 1000);
  after(() => {
    clearInterval(keepAlive);
    for (const pid of scratch.pids) killGroup(pid, 'SIGKILL');
    for (const b of scratch.backends) b.close();
    rmSync(scratch.root, { recursive: true, force: true });
  });
  return scratch;
}
