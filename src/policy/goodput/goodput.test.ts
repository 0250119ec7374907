import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runPolicyConformance } from '../conformance.js';
import { GoodputPolicy, goodputPolicy } from './index.js';
import { buildRoundJobs, defaultGoodputPolicyParams, type RoundJob } from './job-view.js';
import { chooseReplicaCounts } from './sizing.js';
import { job, limits, nodes, perf, snapshot } from './test-jobs.js';

runPolicyConformance(goodputPolicy);

test('a new job without a model starts on one GPU (exploration rule)', () => {
  const decision = new GoodputPolicy().decide(snapshot([job('a')], 2));
  assert.deepEqual(decision.allocations, { a: [0] });
});

test('when jobs of unknown length outnumber GPUs, those in the queues of least attained service run', () => {
  // Queues start at 0, 600 and 6000 GPU-s: j4 and j5 are in the first, j2 and j3 in the second.
  const jobs = [0, 1, 2, 3, 4, 5].map((i) =>
    job(`j${i}`, { attained_service_gpu_s: [9000, 8000, 3000, 2000, 500, 100][i] as number, submitted_at_s: 3000 }),
  );
  const decision = new GoodputPolicy().decide(snapshot(jobs, 1));
  assert.deepEqual(Object.keys(decision.allocations).sort(), ['j2', 'j3', 'j4', 'j5']);
  assert.equal(decision.rejections?.j0?.code, 'WAITING_FOR_GPUS');
});

test('a profiled job with a good speedup grows beyond one node, on whole nodes', () => {
  const big = job('big', { max_profiled_replicas: 8, model: { perf, grad: { sqr: 0.05, var: 5 }, limits } });
  const decision = new GoodputPolicy().decide(snapshot([big], 4));
  const allocation = decision.allocations.big ?? [];
  assert.ok(allocation.length > 4, `expected > 4 replicas, got ${allocation.length}`);
  const perNode = new Map<number, number>();
  for (const n of allocation) perNode.set(n, (perNode.get(n) ?? 0) + 1);
  assert.ok([...perNode.values()].filter((c) => c < 4).length <= 1, 'at most one partially used node');
});

test('two distributed jobs never share a node', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  const jobs = ['x', 'y', 'z'].map((id) => job(id, { max_profiled_replicas: 4, model }));
  const decision = new GoodputPolicy().decide(snapshot(jobs, 5));
  const owners = new Map<number, Set<string>>();
  for (const [id, allocation] of Object.entries(decision.allocations)) {
    if (new Set(allocation).size < 2) continue;
    for (const n of allocation) owners.set(n, (owners.get(n) ?? new Set()).add(id));
  }
  for (const [node, ids] of owners) assert.equal(ids.size, 1, `node ${node} hosts ${[...ids].join(', ')}`);
});

test('a running job moves to more GPUs only when the gain pays for the restart', () => {
  // Speedups 1, 1.10, 1.23, 1.27 for 1..4 GPUs on one node: +16% from 2 to 4 GPUs.
  const model = { perf: { ...perf, alpha_r: 0.05, beta_r: 0.005 }, grad: { sqr: 1, var: 0.1 }, limits };
  // It has run on 4 GPUs before, so the model's speedup at 4 is a measured one.
  const running = job('r', { max_profiled_replicas: 4, model, submitted_at_s: 3500 });
  const state = snapshot([running], 1, { r: [0, 0] });
  // Default pricing: a 30 s restart over a >= 300 s horizon costs ~9%, less than the 16% gain.
  assert.deepEqual(new GoodputPolicy().decide(state).allocations.r, [0, 0, 0, 0]);
  // A short horizon (restart costs ~50% of the remaining time): stay put.
  assert.deepEqual(new GoodputPolicy({ min_horizon_s: 30 }).decide(state).allocations.r, [0, 0]);
});

test('a predicted gain at sizes never run is believed only in part (unmeasured_gain_share)', () => {
  // The same job, measured only up to 2 GPUs: the +16% the model predicts for 4 GPUs is a guess.
  const model = { perf: { ...perf, alpha_r: 0.05, beta_r: 0.005 }, grad: { sqr: 1, var: 0.1 }, limits };
  const running = job('r', { max_profiled_replicas: 2, model, submitted_at_s: 3500 });
  const state = snapshot([running], 1, { r: [0, 0] });
  // Fully believed, the gain pays for the ~9% restart; half of it does not.
  assert.deepEqual(new GoodputPolicy({ unmeasured_gain_share: 1 }).decide(state).allocations.r, [0, 0, 0, 0]);
  assert.deepEqual(new GoodputPolicy({ unmeasured_gain_share: 0.5 }).decide(state).allocations.r, [0, 0]);
  // The discount applies to gains only: the speedup at measured sizes is the model's.
  const views = buildRoundJobs(state, { ...defaultGoodputPolicyParams, unmeasured_gain_share: 0.5 });
  const full = buildRoundJobs(state, { ...defaultGoodputPolicyParams, unmeasured_gain_share: 1 });
  const [half, whole] = [views[0] as RoundJob, full[0] as RoundJob];
  assert.equal(half.speedup(2), whole.speedup(2));
  assert.ok(Math.abs(half.speedup(4) - (whole.speedup(2) + (whole.speedup(4) - whole.speedup(2)) / 2)) < 1e-12);
  // 0: a modelled job never grows past what it has measured, even on an idle cluster.
  assert.deepEqual(
    new GoodputPolicy({ unmeasured_gain_share: 0 }).decide(snapshot([running], 4, { r: [0, 0] })).allocations.r,
    [0, 0],
  );
});

test('a batch-size cap limits the replicas a job can use', () => {
  const capped = job('c', {
    max_profiled_replicas: 16,
    batch_size_cap: 128,
    model: { perf, grad: { sqr: 0.01, var: 10 }, limits },
  });
  const decision = new GoodputPolicy().decide(snapshot([capped], 4));
  assert.ok((decision.allocations.c ?? []).length <= 4, 'at most 128 / 32 = 4 replicas');
});

test('a non-preemptible running job keeps its GPUs even when shorter jobs wait', () => {
  const pinned = job('pinned', {
    preemptible: false,
    max_replicas: 4,
    remaining_samples: 1e9,
    model: { perf, grad: { sqr: 0.05, var: 5 }, limits },
    max_profiled_replicas: 4,
  });
  const short = ['s1', 's2'].map((id) =>
    job(id, { remaining_samples: 1e3, model: { perf, grad: { sqr: 0.05, var: 5 }, limits }, max_profiled_replicas: 4 }),
  );
  const decision = new GoodputPolicy().decide(snapshot([pinned, ...short], 1, { pinned: [0, 0, 0, 0] }));
  assert.deepEqual(decision.allocations.pinned, [0, 0, 0, 0]);
  assert.equal(decision.allocations.s1, undefined);
  assert.equal(decision.rejections?.s1?.code, 'WAITING_FOR_GPUS');
});

test('with declared remaining work, the job with the most work left waits (SRPT order)', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  // Five one-GPU jobs on four GPUs; attained service would favour j4, remaining work favours the others.
  const jobs = [0, 1, 2, 3, 4].map((i) =>
    job(`j${i}`, {
      max_replicas: 1,
      max_profiled_replicas: 1,
      model,
      remaining_samples: (i + 1) * 1e6,
      attained_service_gpu_s: (4 - i) * 1000,
    }),
  );
  const decision = new GoodputPolicy().decide(snapshot(jobs, 1));
  assert.deepEqual(Object.keys(decision.allocations).sort(), ['j0', 'j1', 'j2', 'j3']);
});

test('a job of unknown length just submitted does not preempt jobs whose known remaining work is short, but does long ones', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  const running = (id: string, remaining_samples: number) =>
    job(id, {
      max_replicas: 1,
      max_profiled_replicas: 1,
      model,
      remaining_samples,
      attained_service_gpu_s: 20,
      allocated_since_s: 3580,
    });
  // Two SDK jobs before their first report (no length, no model yet) arrive at two busy slots.
  const fresh = [
    job('u1', { max_replicas: 1, submitted_at_s: 3595 }),
    job('u2', { max_replicas: 1, submitted_at_s: 3596 }),
  ];
  const decide = (remaining_samples: number) =>
    new GoodputPolicy().decide({
      ...snapshot([running('r1', remaining_samples), running('r2', remaining_samples), ...fresh], 1, {
        r1: [0],
        r2: [0],
      }),
      nodes: nodes(1, 2),
    });
  const short = decide(5_000); // seconds of work left
  assert.deepEqual(Object.keys(short.allocations).sort(), ['r1', 'r2'], 'the short jobs finish first');
  assert.equal(short.rejections?.u1?.code, 'WAITING_FOR_GPUS');
  const long = decide(5e9); // days of work left: least attained service lets the new jobs run
  assert.deepEqual(Object.keys(long.allocations).sort(), ['u1', 'u2']);
});

test('exploration: a job grows to at most explore_factor x the largest size it has run at', () => {
  const model = { perf, grad: { sqr: 0.01, var: 10 }, limits };
  const explored = job('e', { max_profiled_replicas: 2, model });
  assert.equal(new GoodputPolicy().decide(snapshot([explored], 8)).allocations.e?.length, 8);
  assert.equal(new GoodputPolicy({ explore_factor: 2 }).decide(snapshot([explored], 8)).allocations.e?.length, 4);
});

test('a fixed batch size bounds the replicas by batch / min_local_bsz', () => {
  const fixed = job('f', {
    max_profiled_replicas: 16,
    fixed_batch_size: 64,
    model: { perf, grad: { sqr: 0.01, var: 10 }, limits },
  });
  assert.ok((new GoodputPolicy().decide(snapshot([fixed], 4)).allocations.f ?? []).length <= 2);
});

test('decisions are deterministic', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  const jobs = [0, 1, 2, 3, 4, 5, 6].map((i) =>
    job(`j${i}`, { max_profiled_replicas: 1 + i, model, remaining_samples: 1e5 * (1 + (i % 3)) }),
  );
  const a = new GoodputPolicy().decide(snapshot(jobs, 3));
  const b = new GoodputPolicy().decide(snapshot(jobs, 3));
  assert.deepEqual(a, b);
});

test('whole-node sizing: multi-node sizes are built from whole nodes before leftovers are spread', () => {
  const view = (id: string, order: number, max_replicas: number, speedup: (r: number) => number): RoundJob => ({
    job: job(id),
    model_corrected: false,
    order,
    current: [],
    current_replicas: 0,
    min_replicas: 0,
    max_replicas,
    speedup,
    weight: 1,
    restart_keep: 1,
    idle_restart_keep: 1,
    utility_power: 1,
    remaining_estimate: 1,
  });
  // A scales linearly, B uses one GPU, C gains 10% from a second GPU; 7 free GPUs, 4 per node.
  const views = [
    view('a', 0, 64, (r) => r),
    view('b', 1, 1, (r) => Math.min(r, 1)),
    view('c', 2, 2, (r) => (r <= 0 ? 0 : 1 + 0.1 * (r - 1))),
  ];
  // Freely, A's fifth GPU (+25%) beats C's second (+10%); in whole nodes A stops at one node.
  assert.deepEqual(chooseReplicaCounts(views, 7, 4, { whole_nodes: false }), [5, 1, 1]);
  assert.deepEqual(chooseReplicaCounts(views, 7, 4, { whole_nodes: true }), [4, 1, 2]);
});

test('min_weight_share floors every weight at that share of the mean weight', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  const jobs = [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
    job(`j${i}`, { max_profiled_replicas: 1, model, remaining_samples: 1e5 * (i + 1) }),
  );
  const e4 = { ...defaultGoodputPolicyParams, rank_exponent: 4 };
  const plain = buildRoundJobs(snapshot(jobs, 2), e4).map((v) => v.weight);
  const floored = buildRoundJobs(snapshot(jobs, 2), { ...e4, min_weight_share: 0.5 }).map((v) => v.weight);
  const mean = plain.reduce((s, w) => s + w, 0) / plain.length;
  // heSRPT shares with e = 4: the job with the most work left gets n * (1/n)^4 = 8^-3.
  assert.ok(Math.abs((plain[7] as number) - 1 / 512) < 1e-12);
  floored.forEach((w, i) => assert.equal(w, Math.max(plain[i] as number, 0.5 * mean)));
});

function bareView(id: string, fields: Partial<RoundJob>): RoundJob {
  const j = fields.job ?? job(id);
  return {
    job: j,
    model_corrected: j.model?.correction !== undefined,
    order: 0,
    current: [],
    current_replicas: 0,
    min_replicas: 0,
    max_replicas: 64,
    speedup: (r) => r,
    weight: 1,
    restart_keep: 1,
    idle_restart_keep: 1,
    utility_power: 1,
    remaining_estimate: 1,
    ...fields,
  };
}

test('sizing looks past a dip in the speedup curve (2 nodes slower than 1, 4 nodes faster)', () => {
  const dip = (r: number): number => (r <= 4 ? r : r <= 8 ? 3 : 0.6 * r);
  // Step by step from 4 GPUs every size up to 8 loses; 16 GPUs (speedup 9.6) is the best.
  assert.deepEqual(chooseReplicaCounts([bareView('d', { speedup: dip, max_replicas: 16 })], 16, 4), [16]);
});

test('gpu_price: a running job with a corrected model does not grow onto the flat part of its speedup curve, and GPUs idle', () => {
  // Speedup 8 on 8 GPUs, 8.1 on 12, 8.15 on 16. From 8 to 12: 1/8 - 1/8.1 = 0.0015 s saved per
  // 1-GPU second of work against 12/8.1 - 1 = 0.48 GPU-s added, 0.0032 s per GPU-s; from 12 to
  // 16, 0.0016 s per GPU-s.
  const flat = (r: number): number => (r <= 8 ? r : r < 12 ? 8 : r < 16 ? 8.1 : 8.15);
  // The price is asked only of a model that carries a correction by measured step times (here an
  // empty one: every factor 1).
  const corrected = { perf, grad: { sqr: 0.05, var: 5 }, limits, correction: { compute: [], shapes: [] } };
  const running = bareView('f', {
    job: job('f', { model: corrected }),
    speedup: flat,
    current: [0, 0, 1, 1],
    current_replicas: 8,
    max_replicas: 16,
  });
  assert.deepEqual(chooseReplicaCounts([running], 16, 4), [16]);
  assert.deepEqual(chooseReplicaCounts([running], 16, 4, { gpu_price: 0.003 }), [12]);
  assert.deepEqual(chooseReplicaCounts([running], 16, 4, { gpu_price: 0.004 }), [8]);
  const plainFit = {
    ...running,
    job: job('f', { model: { ...corrected, correction: undefined } }),
    model_corrected: false,
  };
  assert.deepEqual(chooseReplicaCounts([plainFit], 16, 4, { gpu_price: 0.004 }), [16]);
  // A job that is not running may always start.
  assert.deepEqual(
    chooseReplicaCounts(
      [bareView('w', { job: job('w', { model: corrected }), speedup: (r) => Math.min(r, 1) + 1e-6 * r })],
      4,
      4,
      { gpu_price: 1 },
    ),
    [1],
  );
});

test('GPUs that would idle go to a job whose restart budget is spent', () => {
  const tired = bareView('t', {
    current: [0, 0, 0, 0],
    current_replicas: 4,
    restart_keep: 0.05,
    idle_restart_keep: 0.9,
    max_replicas: 12,
  });
  assert.deepEqual(chooseReplicaCounts([tired], 8 + 4, 4), [12]);
  // With no budget-free price the job stays where it is.
  assert.deepEqual(chooseReplicaCounts([{ ...tired, idle_restart_keep: 0.05 }], 12, 4), [4]);
});

test('hold from history: a job reallocated often prices a resize against its short holds', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  // Submitted 3000 s ago, 9 restarts: its allocations lasted 300 s on average.
  const churned = job('c', { max_profiled_replicas: 4, model, remaining_samples: 1e9, restarts: 9, submitted_at_s: 0 });
  const snap = { ...snapshot([churned], 2), now_s: 3000 };
  const [withHistory] = buildRoundJobs(snap, defaultGoodputPolicyParams);
  const [without] = buildRoundJobs(snap, { ...defaultGoodputPolicyParams, hold_from_history: false });
  assert.ok(Math.abs((withHistory as RoundJob).idle_restart_keep - 300 / 330) < 1e-9);
  assert.ok((without as RoundJob).idle_restart_keep > 0.99);
});
