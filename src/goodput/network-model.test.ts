import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitPerfParams } from './fit.js';
import {
  crossNodeSyncTime_s,
  fitNetworkModel,
  predictPerfParams,
  sizeProxy,
  withNetworkModel,
  type NetworkParams,
} from './network-model.js';
import { fitSyncPhysics } from './sync-physics.js';
import { logOverlap, stepTime_s } from './throughput.js';
import type { PerfParams, ProfilePoint } from './types.js';

const BATCHES = [8, 16, 32, 64, 128];

/**
 * A job's true compute and intra-node terms (gamma unused by the synthetic points); its intra-node
 * sync on 4 GPUs, alpha_r + 2 beta_r, is 0.24 alpha_c unless `alpha_r` is given.
 */
function perfOf(alpha_c: number, alpha_r = alpha_c / 5): PerfParams {
  return { alpha_c, beta_c: alpha_c / 20, alpha_n: 1e-8, beta_n: 1e-8, alpha_r, beta_r: alpha_c / 50, gamma: 2 };
}

/** alpha_r + 2 beta_r: the intra-node sync time on 4 GPUs that the parameter map adds. */
const intraSync = (perf: PerfParams): number => perf.alpha_r + 2 * perf.beta_r;

/**
 * Multi-node points of a job whose cross-node sync is `bandwidth_s + latency_s (r - 2)` (or, with
 * `growth`, `bandwidth_s (1 + growth (r - 2))`), overlapped with exponent gamma.
 */
function multiNodePoints(
  perf: PerfParams,
  bandwidth_s: number,
  latency_s: number,
  gamma: number,
  nodes: readonly number[],
  growth = 0,
): ProfilePoint[] {
  return nodes.flatMap((n) =>
    BATCHES.map((b) => {
      const r = 4 * n;
      const acc = perf.alpha_c + perf.beta_c * b;
      const net = bandwidth_s * (1 + growth * (r - 2)) + latency_s * (r - 2);
      return {
        num_nodes: n,
        num_replicas: r,
        local_bsz: b,
        accum_step_time_s: acc,
        optim_step_time_s: Math.exp(logOverlap(acc, net, gamma)),
      };
    }),
  );
}

/** One-node points of a job: 1, 2 and 4 GPUs under its own overlap. */
function oneNodePoints(perf: PerfParams): ProfilePoint[] {
  return [1, 2, 4].flatMap((r) =>
    BATCHES.map((b) => ({
      num_nodes: 1,
      num_replicas: r,
      local_bsz: b,
      accum_step_time_s: perf.alpha_c + perf.beta_c * b,
      optim_step_time_s: stepTime_s(perf, 1, r, b, 0),
    })),
  );
}

function assertRel(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual / expected - 1) <= tol, `${what}: ${actual} vs ${expected}`);
}

const NET: NetworkParams = {
  proxy: 'fixed_compute',
  sync_per_proxy: 4,
  proxy_exponent: 1,
  latency_per_replica_s: 0.002,
  growth_per_replica: 0,
  gamma: 2.5,
  num_jobs: 3,
  num_points: 30,
};

test('fitSyncPhysics recovers each job bandwidth term, the latency and gamma from exact points', () => {
  const truth = [0.05, 0.4, 1.5];
  const jobs = truth.map((bw, j) => multiNodePoints(perfOf([0.02, 0.1, 0.3][j] as number), bw, 0.003, 2.5, [2, 4, 8]));
  const fit = fitSyncPhysics(jobs);
  assertRel(fit.gamma, 2.5, 1e-3, 'gamma');
  assertRel(fit.latency_per_replica_s, 0.003, 1e-2, 'latency');
  truth.forEach((bw, j) => assertRel(fit.bandwidth_s[j] as number, bw, 1e-2, `bandwidth of job ${j}`));
});

test('fitSyncPhysics with proportional growth recovers the growth per replica, the bandwidth terms and gamma', () => {
  const truth = [0.05, 0.4, 1.5];
  const jobs = truth.map((bw, j) =>
    multiNodePoints(perfOf([0.02, 0.1, 0.3][j] as number), bw, 0, 2.5, [2, 4, 8], 0.01),
  );
  const fit = fitSyncPhysics(jobs, 'proportional');
  assertRel(fit.gamma, 2.5, 1e-3, 'gamma');
  assertRel(fit.growth_per_replica, 0.01, 1e-2, 'growth');
  assert.equal(fit.latency_per_replica_s, 0);
  truth.forEach((bw, j) => assertRel(fit.bandwidth_s[j] as number, bw, 1e-2, `bandwidth of job ${j}`));
  // The latency form cannot express it: a small job's sync grows far less than a large one's.
  assert.equal(fitSyncPhysics(jobs).growth_per_replica, 0);
});

test("a proportional network model predicts beta_n from each job's own bandwidth term", () => {
  const net: NetworkParams = { ...NET, latency_per_replica_s: 0, growth_per_replica: 0.01 };
  const small = withNetworkModel(perfOf(0.01), net);
  const large = withNetworkModel(perfOf(0.3), net);
  assertRel(small.beta_n, 0.01 * 4 * 0.01, 1e-12, 'small job');
  assertRel(large.beta_n, 0.01 * 4 * 0.3, 1e-12, 'large job');
  assertRel(crossNodeSyncTime_s(net, perfOf(0.3), 66), 4 * 0.3 * (1 + 0.01 * 64), 1e-12, 'sync on 66 replicas');
});

test('fitNetworkModel recovers sync per unit of alpha_c when the sync is proportional to it', () => {
  const alphas = [0.02, 0.1, 0.3];
  // The one-node fit is injected, so the proxy is exactly alpha_c.
  const byPoints = new Map<ProfilePoint, PerfParams>();
  const jobs = alphas.map((a) => {
    const perf = perfOf(a);
    const one = oneNodePoints(perf);
    byPoints.set(one[0] as ProfilePoint, perf);
    return { points: [...one, ...multiNodePoints(perf, 6 * a, 0.004, 2, [2, 4, 16])] };
  });
  const fit = (points: readonly ProfilePoint[]): PerfParams => byPoints.get(points[0] as ProfilePoint) as PerfParams;
  const net = fitNetworkModel(jobs, {}, fit);
  assert.ok(net);
  assertRel(net.sync_per_proxy, 6, 2e-2, 'sync per proxy');
  assert.equal(net.proxy_exponent, 1);
  assertRel(net.latency_per_replica_s, 0.004, 5e-2, 'latency');
  assertRel(net.gamma, 2, 1e-2, 'gamma');
  assert.equal(net.num_jobs, 3);
  assert.equal(net.num_points, 3 * 3 * BATCHES.length);
  // The power mapping finds the exponent of a sync that grows like alpha_c^1.5.
  const powerJobs = alphas.map((a, j) => ({
    points: [
      ...(jobs[j] as { points: ProfilePoint[] }).points.filter((p) => p.num_nodes === 1),
      ...multiNodePoints(perfOf(a), 20 * a ** 1.5, 0.001, 2, [2, 4]),
    ],
  }));
  const power = fitNetworkModel(powerJobs, { mapping: 'power' }, fit);
  assert.ok(power);
  assertRel(power.proxy_exponent, 1.5, 2e-2, 'exponent');
  assertRel(power.sync_per_proxy, 20, 5e-2, 'scale');
});

/** Jobs of the parameter-map tests: alpha_r varies apart from alpha_c, so the three terms are told apart. */
const COUNTED = [
  { alpha_c: 0.02, alpha_r: 0.05, P: 100e6 },
  { alpha_c: 0.1, alpha_r: 0.002, P: 10e6 },
  { alpha_c: 0.3, alpha_r: 0.3, P: 50e6 },
  { alpha_c: 0.05, alpha_r: 0.01, P: 2e6 },
  { alpha_c: 0.2, alpha_r: 0.1, P: 20e6 },
];
type Counted = (typeof COUNTED)[number];

/**
 * Jobs of COUNTED that report their count, whose bandwidth term is `weight` x their intra-node sync
 * + 8e-9 P + 2 alpha_c, with 1% growth per replica; and the injected one-node fit (the truth).
 */
function countedJobs(weight: number): {
  jobs: { points: ProfilePoint[]; model_parameters: number }[];
  fit: (points: readonly ProfilePoint[]) => PerfParams;
  bandwidth: (j: Counted) => number;
} {
  const bandwidth = (j: Counted): number =>
    weight * intraSync(perfOf(j.alpha_c, j.alpha_r)) + 8e-9 * j.P + 2 * j.alpha_c;
  const byPoints = new Map<ProfilePoint, PerfParams>();
  const jobs = COUNTED.map((j) => {
    const perf = perfOf(j.alpha_c, j.alpha_r);
    const one = oneNodePoints(perf);
    byPoints.set(one[0] as ProfilePoint, perf);
    return { points: [...one, ...multiNodePoints(perf, bandwidth(j), 0, 2, [2, 4, 16], 0.01)], model_parameters: j.P };
  });
  return { jobs, fit: (points) => byPoints.get(points[0] as ProfilePoint) as PerfParams, bandwidth };
}

test('with reported parameter counts, fitNetworkModel recovers N = a P + b alpha_c and proportional growth', () => {
  const { jobs, fit, bandwidth } = countedJobs(0);
  const net = fitNetworkModel(jobs, {}, fit);
  assert.ok(net?.parameter_map);
  assert.equal(net.parameter_map.intra_sync_weight, 0);
  assertRel(net.parameter_map.sync_per_parameter_s, 8e-9, 5e-2, 'sync per parameter');
  assertRel(net.parameter_map.sync_per_proxy_s, 2, 5e-2, 'sync per unit of alpha_c');
  assertRel(net.growth_per_replica, 0.01, 5e-2, 'growth');
  assert.equal(net.latency_per_replica_s, 0);
  // A new job that reports its count is predicted by the map; one that does not, by alpha_c alone.
  const fresh = { alpha_c: 0.04, alpha_r: 0.08, P: 30e6 };
  const freshPerf = perfOf(fresh.alpha_c, fresh.alpha_r);
  assertRel(withNetworkModel(freshPerf, net, fresh.P).alpha_n, bandwidth(fresh), 5e-2, 'new job with P');
  assertRel(
    crossNodeSyncTime_s(net, freshPerf, 10, fresh.P),
    bandwidth(fresh) * (1 + 0.01 * 8),
    6e-2,
    'sync on 10 replicas',
  );
  assertRel(withNetworkModel(freshPerf, net).alpha_n, net.sync_per_proxy * fresh.alpha_c, 1e-12, 'new job without P');
  // One job with a count is not enough for two coefficients: no map, and the latency form.
  const one = fitNetworkModel(
    jobs.map((j, i) => (i === 0 ? j : { points: j.points })),
    {},
    fit,
  );
  assert.ok(one);
  assert.equal(one.parameter_map, undefined);
  assert.equal(one.growth_per_replica, 0);
});

test('intra_sync_weight 1 recovers N = S + a P + b alpha_c; fitted, it finds the weight in the data', () => {
  const whole = countedJobs(1);
  const net = fitNetworkModel(whole.jobs, { intra_sync_weight: 1 }, whole.fit);
  assert.ok(net?.parameter_map);
  assert.equal(net.parameter_map.intra_sync_weight, 1);
  assertRel(net.parameter_map.sync_per_parameter_s, 8e-9, 5e-2, 'sync per parameter, weight 1');
  assertRel(net.parameter_map.sync_per_proxy_s, 2, 5e-2, 'sync per unit of alpha_c, weight 1');
  const fresh = { alpha_c: 0.04, alpha_r: 0.08, P: 30e6 };
  assertRel(
    withNetworkModel(perfOf(fresh.alpha_c, fresh.alpha_r), net, fresh.P).alpha_n,
    whole.bandwidth(fresh),
    5e-2,
    'new job with P and S',
  );
  // The default map has no S term: it cannot be exact on these data.
  const def = fitNetworkModel(whole.jobs, {}, whole.fit);
  assert.ok(def?.parameter_map);
  assert.ok(Math.abs(def.parameter_map.sync_per_proxy_s / 2 - 1) > 0.1, `b = ${def.parameter_map.sync_per_proxy_s}`);
  const half = countedJobs(0.5);
  const fitted = fitNetworkModel(half.jobs, { intra_sync_weight: 'fitted' }, half.fit);
  assert.ok(fitted?.parameter_map);
  assertRel(fitted.parameter_map.intra_sync_weight, 0.5, 5e-2, 'fitted weight');
  assertRel(fitted.parameter_map.sync_per_parameter_s, 8e-9, 5e-2, 'sync per parameter, fitted weight');
});

test('two counted jobs alike but for their intra-node sync: weight 1 tells them apart by exactly that sync, the default not', () => {
  const { jobs, fit } = countedJobs(1);
  const slow = perfOf(0.1, 0.4);
  const fast = perfOf(0.1, 0.1);
  const gap = (net: NetworkParams | undefined, P?: number): number =>
    withNetworkModel(slow, net, P).alpha_n - withNetworkModel(fast, net, P).alpha_n;
  const whole = fitNetworkModel(jobs, { intra_sync_weight: 1 }, fit);
  assertRel(gap(whole, 40e6), 0.3, 1e-9, 'gap of alpha_n, weight 1');
  // Without a count the proxy map does not see the intra-node sync.
  assert.equal(gap(whole), 0);
  assert.equal(gap(fitNetworkModel(jobs, {}, fit), 40e6), 0);
});

test("no multi-node points anywhere: no model, and predictions keep today's fit", () => {
  const points = oneNodePoints(perfOf(0.1));
  assert.equal(fitNetworkModel([{ points }, { points: [] }]), undefined);
  assert.equal(fitNetworkModel([]), undefined);
  const own = fitPerfParams(points);
  assert.equal(withNetworkModel(own, undefined), own);
  assert.deepEqual(predictPerfParams(points, undefined), own);
});

test('a job that has run on several nodes keeps its own fit', () => {
  const perf = perfOf(0.1);
  const points = [...oneNodePoints(perf), ...multiNodePoints(perf, 0.5, 0.001, 2, [2])];
  assert.deepEqual(predictPerfParams(points, NET), fitPerfParams(points));
});

test('withNetworkModel sets the inter-node terms and gamma and keeps the rest', () => {
  const perf = perfOf(0.1);
  const out = withNetworkModel(perf, NET);
  assert.equal(out.alpha_n, 4 * 0.1);
  assert.equal(out.beta_n, 0.002);
  assert.equal(out.gamma, 2.5);
  assert.equal(out.alpha_c, perf.alpha_c);
  assert.equal(out.beta_c, perf.beta_c);
  assert.equal(out.alpha_r, perf.alpha_r);
  assert.equal(out.beta_r, perf.beta_r);
  // The throughput model's network time on several nodes is the network model's sync time.
  for (const r of [5, 8, 16, 64]) {
    const expected = crossNodeSyncTime_s(NET, perf, r);
    assertRel(
      stepTime_s(out, 2, r, 1e-9, 0) ** 2.5 - (perf.alpha_c + perf.beta_c * 1e-9) ** 2.5,
      expected ** 2.5,
      1e-9,
      `r=${r}`,
    );
  }
});

test('predicted multi-node step times are positive, above compute, and non-decreasing in the nodes', () => {
  const truth = perfOf(0.05);
  const predicted = predictPerfParams(oneNodePoints(truth), NET);
  assert.equal(predicted.gamma, NET.gamma);
  for (const b of BATCHES) {
    let last = 0;
    for (let n = 2; n <= 16; n++) {
      const t = stepTime_s(predicted, n, 4 * n, b, 0);
      assert.ok(Number.isFinite(t) && t > 0);
      assert.ok(t >= predicted.alpha_c + predicted.beta_c * b);
      assert.ok(t >= last, `b=${b}: ${n} nodes ${t} < ${last}`);
      last = t;
    }
  }
  // On one GPU nothing changes but the fit under the pinned gamma: compute within 1% of the truth.
  for (const b of BATCHES)
    assertRel(stepTime_s(predicted, 1, 1, b, 0), truth.alpha_c + truth.beta_c * b, 1e-2, `1 GPU b=${b}`);
});

test('cross-node sync time grows with the proxy and the replicas; proxies are positive', () => {
  assert.ok(crossNodeSyncTime_s(NET, perfOf(0.2), 8) > crossNodeSyncTime_s(NET, perfOf(0.1), 8));
  assert.ok(crossNodeSyncTime_s(NET, perfOf(0.1), 64) > crossNodeSyncTime_s(NET, perfOf(0.1), 8));
  assert.ok(crossNodeSyncTime_s({ ...NET, sync_per_proxy: 0, latency_per_replica_s: 0 }, perfOf(0.1), 8) > 0);
  const zero: PerfParams = { alpha_c: 0, beta_c: 0, alpha_n: 0, beta_n: 0, alpha_r: 0, beta_r: 0, gamma: 1 };
  for (const kind of ['fixed_compute', 'intra_sync', 'constant'] as const) assert.ok(sizeProxy(zero, kind) > 0);
  assert.equal(sizeProxy(perfOf(0.1), 'intra_sync'), 0.1 / 5 + 2 * (0.1 / 50));
});

test('fitPerfParams pins gamma only when asked', () => {
  const points = oneNodePoints(perfOf(0.1));
  assert.equal(fitPerfParams(points, { gamma: 3 }).gamma, 3);
  assert.deepEqual(fitPerfParams(points, {}), fitPerfParams(points));
});
