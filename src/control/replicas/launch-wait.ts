/**
 * Launch failures that are not the job's fault (slurmctld unreachable, a full disk, a cluster
 * whose state refuses new jobs now): the job stays `starting` and the pump retries the launch
 * instead of failing the job.
 */
import { GoodputError } from '../../core/errors.js';
import { isDiskFull } from '../../datadir/disk-space.js';

/**
 * Why a failed launch waits (and the key its event is recorded once under), or undefined: the job
 * fails. Key `held`: the backend refused it for the cluster's state (a drained partition); it is
 * retried each scheduling round, not at every tick.
 */
export function launchWait(error: unknown, message: string): { key: string; reason: string } | undefined {
  if (error instanceof GoodputError && error.code === 'E_BACKEND_UNAVAILABLE')
    return { key: 'unavailable', reason: message };
  if (error instanceof GoodputError && error.code === 'E_LAUNCH_HELD')
    return {
      key: 'held',
      reason: `${message}; the job waits (its checkpoint kept) and the launch is retried each round`,
    };
  if (isDiskFull(error))
    return {
      key: 'disk-full',
      reason: `the data directory's disk is full (${message}); the launch starts once space frees`,
    };
  return undefined;
}
