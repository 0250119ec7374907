import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { GoodputError } from '../core/errors.js';
import type { PolicyFactory, PolicyParamValue } from '../policy/policy.js';
import { createSharedPolicy, findPolicy, policyNames } from '../policy/registry.js';
import type { SharesConfig, SharesKnobs } from '../policy/shares/index.js';
import { QuotaShortfall, sharesReport, type SharesReport } from './shares-metrics.js';
import { namesUsers } from './sim-owners.js';
import { FairShareEstimator } from './fairness.js';
import { summarize, type WorkloadMetrics } from './metrics.js';
import { resolveSimOptions, simulate, type RoundProgress, type SimOptions } from './simulator.js';
import { jitterSubmissions, loadWorkload } from './workload.js';

/** Everything needed to run one policy on one workload file (serializable for workers). */
export interface RunSettings {
  policy: string;
  seed: number;
  /** Overrides of the policy's knobs, validated by parsePolicyParams. */
  policy_params?: Readonly<Record<string, PolicyParamValue>>;
  interval_s?: number;
  interference?: number;
  nodes?: number;
  gpus_per_node?: number;
  /** Directory for the interval log DIR/<workload>.jsonl, if any. */
  out_dir?: string;
  /** Compute finish-time fairness (default true; benchmarks skip it). */
  fairness?: boolean;
  /** Move every submission by up to +-half this many seconds, drawn from `seed` (0: as written). */
  submit_jitter_s?: number;
  /** Teams, weights, quotas of a workload with a `user` column (goodput sim --shares; issue 48). */
  shares?: SharesConfig;
  /** Knobs of the shares layer. */
  shares_knobs?: SharesKnobs;
}

/** Result of one workload under one policy, as printed by `goodput sim --json`. */
export interface WorkloadReport extends WorkloadMetrics {
  workload: string;
  policy: string;
  rounds: number;
  wall_ms: number;
  /** JCT (s) per job name, in workload order. */
  jobs: Record<string, number>;
  /** Worst finish-time-fairness ratio (JCT / JCT alone on the fair share); see fairness.ts. */
  ftf_worst: number;
  /** Share of jobs whose finish-time-fairness ratio exceeds 1. */
  ftf_unfair_share: number;
  /** Finish-time-fairness ratio per job. */
  ftf: Record<string, number>;
  /** Per user and per team (workloads with a `user` column). */
  shares?: SharesReport;
}

/** Workload name as reported: the file name without `.csv`. */
export function workloadName(file: string): string {
  return basename(file).replace(/\.csv$/i, '');
}

/** The registered policy factory, or a usage error listing the valid names. */
export function requirePolicy(name: string): PolicyFactory {
  const factory = findPolicy(name);
  if (!factory)
    throw new GoodputError(
      'E_UNKNOWN_POLICY',
      `unknown policy '${name}'; valid policies: ${policyNames().join(', ')}.`,
      2,
    );
  return factory;
}

/**
 * Loads `file`, simulates it under `settings.policy` and summarizes it (metrics, per-job JCTs,
 * finish-time fairness). Writes the interval log when `out_dir` is set. Throws GoodputError on
 * bad input.
 */
export async function runWorkload(
  file: string,
  settings: RunSettings,
  onRound?: (p: RoundProgress) => void,
): Promise<WorkloadReport> {
  requirePolicy(settings.policy);
  // Made before the simulation starts: the registry loads the MILP solver where the policy uses one.
  const policy = await createSharedPolicy(
    settings.policy,
    { seed: settings.seed, ...(settings.policy_params ? { params: settings.policy_params } : {}) },
    settings.shares_knobs,
  );
  const workload = jitterSubmissions(loadWorkload(file), settings.submit_jitter_s ?? 0, settings.seed);
  const name = workloadName(file);
  const options: SimOptions = {
    interval_s: settings.interval_s,
    interference: settings.interference,
    nodes: settings.nodes,
    gpus_per_node: settings.gpus_per_node,
    onRound,
    ...(settings.shares ? { shares: settings.shares } : {}),
  };
  const resolved = resolveSimOptions(options);
  const owned = namesUsers(workload.jobs);
  const shortfall = owned ? new QuotaShortfall(settings.shares, resolved.interval_s) : undefined;
  if (shortfall) options.onDecision = (snapshot, allocations) => shortfall.observe(snapshot, allocations);
  let fd: number | undefined;
  if (settings.out_dir) {
    mkdirSync(settings.out_dir, { recursive: true });
    fd = openSync(join(settings.out_dir, `${name}.jsonl`), 'w');
    const out = fd;
    options.onInterval = (record) => writeSync(out, JSON.stringify(record) + '\n');
  }
  const started = performance.now();
  let result;
  try {
    result = simulate(workload, settings.policy, policy, options);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const wall_ms = performance.now() - started;
  const fairness = new FairShareEstimator(result.mode, resolved, result.total_gpus);
  const jobs: Record<string, number> = {};
  const ftf: Record<string, number> = {};
  let worst = 0;
  let unfair = 0;
  result.jobs.forEach((outcome, i) => {
    jobs[outcome.name] = outcome.jct_s;
    if (settings.fairness === false) return;
    const ratio = fairness.ratio(workload.jobs[i]!, outcome);
    ftf[outcome.name] = ratio;
    worst = Math.max(worst, ratio);
    if (ratio > 1) unfair++;
  });
  return {
    workload: name,
    policy: settings.policy,
    ...summarize(result),
    rounds: result.rounds,
    wall_ms,
    jobs,
    ftf_worst: settings.fairness === false ? NaN : worst,
    ftf_unfair_share: settings.fairness === false ? NaN : unfair / result.jobs.length,
    ftf,
    ...(owned ? { shares: sharesReport(result.jobs, shortfall) } : {}),
  };
}
