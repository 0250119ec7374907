/**
 * Runs one typed policy over one Sia workload on a mixed cluster and summarizes it, as
 * `goodput sim --cluster` and bench:hetero report it.
 */
import { performance } from 'node:perf_hooks';
import { GoodputError } from '../../core/errors.js';
import type { Policy } from '../../policy/policy.js';
import { createPolicy, createSharedPolicy } from '../../policy/registry.js';
import type { SharesConfig } from '../../policy/shares/index.js';
import type { GoodputHeteroParams } from '../../policy/sia/goodput-hetero.js';
import { percentile, summarize, type WorkloadMetrics } from '../metrics.js';
import { workloadName } from '../run-workload.js';
import { QuotaShortfall, sharesReport, type SharesReport } from '../shares-metrics.js';
import { namesUsers } from '../sim-owners.js';
import { heteroFairness } from './hetero-fairness.js';
import { clusterNodes, HETERO_INTERVAL_S, loadHeteroWorkload, parseClusterSpec, simulateHetero } from './hetero-sim.js';
import { loadHeteroApplications } from './typed-app.js';

/** Policies that run on a mixed cluster. */
export const HETERO_POLICIES = ['goodput', 'sia', 'pollux'] as const;

/** One mixed-cluster run's settings. */
export interface HeteroRunSettings {
  policy: string;
  cluster: string;
  traces_dir: string;
  seed: number;
  /** Restart a job on every move, not only on a change of type or shape (default false). */
  strict_moves?: boolean;
  /** Compute finish-time fairness (default true). */
  fairness?: boolean;
  /** Knobs of the goodput policy that differ from its defaults (a variant, for benchmarks). */
  goodput_params?: Partial<GoodputHeteroParams>;
  /** Teams, weights and quotas per type for a workload with a `user` column (issue 48). */
  shares?: SharesConfig;
}

/** One workload's result (the JSON of `goodput sim --cluster`). */
export interface HeteroReport extends WorkloadMetrics {
  workload: string;
  policy: string;
  cluster: string;
  rounds: number;
  wall_ms: number;
  decision_p50_ms: number;
  decision_p99_ms: number;
  /** Worst finish-time-fairness ratio (hetero-fairness.ts); NaN when not computed. */
  ftf_worst: number;
  /** GPU-hours per job. */
  gpu_hours_per_job: number;
  /** Jobs per GPU type they finished on. */
  jobs: Record<string, number>;
  /** Per user and team, for a workload whose jobs name users (as `goodput sim --json` on one type). */
  shares?: SharesReport;
}

/**
 * A fresh registered policy of HETERO_POLICIES by name; `goodput_params` override the goodput
 * policy's defaults on several types; `shared`: under the shares layer (jobs that name users).
 */
export async function heteroPolicy(
  name: string,
  seed: number,
  goodput_params: Partial<GoodputHeteroParams> = {},
  shared = false,
): Promise<Policy> {
  if (!(HETERO_POLICIES as readonly string[]).includes(name))
    throw new GoodputError(
      'E_UNKNOWN_POLICY',
      `policy '${name}' does not run on a mixed cluster; valid: ${HETERO_POLICIES.join(', ')}`,
      2,
    );
  const options = { seed, mixed_params: goodput_params as Record<string, number> };
  return shared ? createSharedPolicy(name, options) : createPolicy(name, options);
}

/** Simulates `file` under `settings` and summarizes it. */
export async function runHeteroWorkload(
  file: string,
  settings: HeteroRunSettings,
  onRound?: (now_s: number, done: number, total: number) => void,
): Promise<HeteroReport> {
  const parts = parseClusterSpec(settings.cluster);
  const nodes = clusterNodes(parts);
  const apps = loadHeteroApplications(
    settings.traces_dir,
    parts.map((p) => p.type),
  );
  const workload = loadHeteroWorkload(file, apps);
  const owned = namesUsers(workload);
  // Owned: the shares layer over the policy (a workload without users runs the policy bare).
  const policy = await heteroPolicy(settings.policy, settings.seed, settings.goodput_params, owned);
  const shortfall = owned ? new QuotaShortfall(settings.shares, HETERO_INTERVAL_S) : undefined;
  const t0 = performance.now();
  const result = simulateHetero(workload, policy, nodes, {
    ...(onRound ? { onRound } : {}),
    strict_moves: settings.strict_moves === true,
    ...(settings.shares ? { shares: settings.shares } : {}),
    ...(shortfall ? { onDecision: (snapshot, allocations) => shortfall.observe(snapshot, allocations) } : {}),
  });
  const wall_ms = performance.now() - t0;
  const m = summarize({
    policy: result.policy,
    mode: 'adaptive',
    total_gpus: result.total_gpus,
    jobs: result.jobs,
    rounds: result.rounds,
  });
  const ftf = settings.fairness === false ? NaN : heteroFairness(workload, result, parts);
  const jobsByType: Record<string, number> = {};
  for (const t of result.final_types) jobsByType[t] = (jobsByType[t] ?? 0) + 1;
  return {
    workload: workloadName(file),
    policy: settings.policy,
    cluster: settings.cluster,
    ...m,
    rounds: result.rounds,
    wall_ms,
    decision_p50_ms: result.decision_ms.length ? percentile(result.decision_ms, 50) : 0,
    decision_p99_ms: result.decision_ms.length ? percentile(result.decision_ms, 99) : 0,
    ftf_worst: ftf,
    gpu_hours_per_job: m.gpu_hours / m.num_jobs,
    jobs: jobsByType,
    ...(owned ? { shares: sharesReport(result.jobs, shortfall) } : {}),
  };
}
