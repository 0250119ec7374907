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
 * The round's rejections as the user should read them, by job id: each policy reason in the
 * cluster's unit (`unit`: "GPU" or "CPU slot"), with "not preemptible" made precise from `jobs`
 * (the round's active jobs). Codes unchanged. The jobs are read once a round, not once a
 * rejection: 1,000 waiting jobs times 3,000 active ones held the server's event loop for 25-50 ms
 * a round at 16,384 GPUs (issue #49).
 */
export function waitingReasons(
  rejections: Readonly<Record<string, Rejection>>,
  jobs: readonly JobRecord[],
  unit: string,
): Map<string, Rejection> {
  let words: { text: string | undefined } | undefined; // read when a reason first needs them
  const out = new Map<string, Rejection>();
  for (const [id, rejection] of Object.entries(rejections)) {
    let message = rejection.message;
    if (NOT_PREEMPTIBLE.test(message)) {
      words ??= { text: notPreemptibleWords(jobs, unit) };
      const text = words.text;
      // "3 not preemptible" keeps its count unless the words bring their own counts.
      if (text !== undefined)
        message = message.replace(NOT_PREEMPTIBLE, (_m, count: string | undefined) =>
          /^\d/.test(text) ? text : `${count ?? ''}${text}`,
        );
    }
    out.set(id, { ...rejection, message: inUnit(message, unit) });
  }
  return out;
}

/** A policy's words for jobs it may not stop, with the count before them if any. */
const NOT_PREEMPTIBLE = /(\d+ )?\bnot preemptible\b/;
