/**
 * A backend's launch request as the backend tests make it (local and Slurm backends, containment,
 * log caps): one rank of `job_id`'s first attempt, on device 0 of the first node, its job folder
 * under `root`, reporting to an address nothing listens on. Test-only (not shipped: testing/).
 */
import { join } from 'node:path';
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
