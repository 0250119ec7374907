/** The Pollux policy (pollux-spec §4): public API. */
export { createPolluxPolicy, polluxMaxReplicas, polluxPolicy } from './pollux-policy.js';
export type { PolluxTuning } from './pollux-policy.js';
export { runNsga2 } from './nsga2.js';
export type { GeneticProblem, Nsga2Options, Nsga2Result } from './nsga2.js';
export { PolluxProblem } from './problem.js';
export { restartFactor } from './problem-job.js';
export type { ProblemJob } from './problem-job.js';
