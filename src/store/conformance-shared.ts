/** What the parts of the Store conformance suite share: a job spec and an error-code matcher. */
import { GoodputError } from '../core/errors.js';
import type { JobSpec } from './types.js';

/** The spec of the suite's jobs (a few tests compare it back or go past its limits). */
export const conformanceSpec: JobSpec = {
  name: 'mnist',
  command: ['python', 'train.py', '--lr', '0.1'],
  workdir: '/tmp',
  env: { A: '1' },
  min_replicas: 0,
  max_replicas: 4,
  max_restarts: 2,
  preemptible: true,
  priority: 0,
};

/** An `assert.rejects` matcher: a GoodputError with this code. */
export function isCode(code: string): (error: unknown) => boolean {
  return (error: unknown) => error instanceof GoodputError && error.code === code;
}
