/**
 * A policy's reason for a waiting job, in this cluster's words (issue 52). Policies are pure and
 * speak of "GPUs" whatever the cluster holds; on a server of CPU slots the reason says "CPU
 * slots". And where a policy says the busy devices are held by jobs that are "not preemptible",
 * the control plane knows which cause that is for the jobs holding devices now: a spec that says
 * `preemptible: false`, or a plain script with no checkpoint that a stop would set back to its
 * beginning (snapshot.ts `stopProtection`). Pure.
 */
import type { Rejection } from '../../policy/policy.js';
import type { JobRecord } from '../../store/types.js';
import { holdsDevices, stopProtection } from './snapshot.js';

/** "GPU(s)" -> "CPU slot(s)" in a policy's words, when the cluster's devices are CPU slots. */
function inUnit(text: string, unit: string): string {
  if (unit === 'GPU') return text;
  return text.replace(/\bGPUs\b/g, `${unit}s`).replace(/\bGPU\b/g, unit);
}

/** Which of the jobs holding devices are unstoppable, and why, in words with their device counts. */
function notPreemptibleWords(jobs: readonly JobRecord[], unit: string): string | undefined {
  let spec = 0;
  let plain = 0;
  for (const j of jobs) {
    if (!holdsDevices(j)) continue;
    if (j.spec.preemptible === false) spec += j.allocation.length;
    else if (stopProtection(j) !== undefined) plain += j.allocation.length;
  }
  const specWords = 'not preemptible (submitted with preemptible: false)';
  const plainWords =
    'no checkpoint yet (a stop would set them back to their beginning; submit with preemptible: true to allow)';
  if (spec > 0 && plain > 0) return `${spec} ${unit}${spec > 1 ? 's' : ''} ${specWords}, ${plain} ${plainWords}`;
  if (spec > 0) return specWords;
  if (plain > 0) return plainWords;
  return undefined;
}

/**
 * The rejection as the user should read it: the policy's reason in the cluster's unit (`unit`:
 * "GPU" or "CPU slot"), with "not preemptible" made precise from `jobs` (the round's active jobs).
 * Code unchanged.
 */
export function waitingReason(rejection: Rejection, jobs: readonly JobRecord[], unit: string): Rejection {
  let message = rejection.message;
  const words = notPreemptibleWords(jobs, unit);
  if (words !== undefined) {
    // "3 not preemptible" keeps its count unless the words bring their own counts.
    message = message.replace(/(\d+ )?\bnot preemptible\b/, (_m, count: string | undefined) =>
      /^\d/.test(words) ? words : `${count ?? ''}${words}`,
    );
  }
  return { ...rejection, message: inUnit(message, unit) };
}
