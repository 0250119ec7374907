/**
 * Generated clusters for the decision-time benches (bench:policy, bench:scale): jobs drawn from
 * the six Pollux applications (one GPU type) or Sia's applications (several types), with fitted
 * throughput models, random attained service, ages, profiled sizes and remaining work, and random
 * packed initial allocations. Deterministic for a seed.
 */
import type { Allocation, ClusterSnapshot, NodeInfo, PolicyJob } from '../src/core/cluster.js';
import { Random } from '../src/core/random.js';
import { fitPerfParams } from '../src/goodput/fit.js';
import type { GoodputModel, ProfilePoint } from '../src/goodput/types.js';
import { buildJobTypes } from '../src/model/job-types.js';
import { applicationNames, getApplication, type TraceApplication } from '../src/sim/application.js';
import { clusterNodes, jobMaxReplicas, type ClusterPart } from '../src/sim/hetero/hetero-sim.js';
import { loadHeteroApplications, typeLimits, type HeteroApplication } from '../src/sim/hetero/typed-app.js';
import { defaultTracesDir } from '../src/sim/workload.js';

/** A generated round-0 snapshot (jobs are mutated by `feedBack`). */
export interface GeneratedCluster {
  nodes: NodeInfo[];
  jobs: PolicyJob[];
  allocations: Record<string, Allocation>;
  now_s: number;
}

type Throughput = (placement: readonly number[], local_bsz: number) => readonly [number, number];

/** Throughput model fitted on profiles up to 4 nodes x 4 GPUs of a throughput table. */
function fittedModel(app: TraceApplication, throughput: Throughput, epoch: number, limits = app.limits): GoodputModel {
  const points: ProfilePoint[] = [];
  for (const placement of [[1], [2], [4], [4, 4], [4, 4, 4, 4]]) {
    const replicas = placement.reduce((s, g) => s + g, 0);
    for (const local_bsz of [
      limits.min_local_bsz,
      Math.max(limits.min_local_bsz, Math.floor(limits.max_local_bsz / 2)),
      limits.max_local_bsz,
    ]) {
      if (local_bsz * replicas > limits.max_batch_size && replicas > 1) continue;
      const [step_time_s, sync_time_s] = throughput(placement, local_bsz);
      points.push({
        num_nodes: placement.length,
        num_replicas: replicas,
        local_bsz,
        accum_step_time_s: step_time_s - sync_time_s,
        optim_step_time_s: step_time_s,
      });
    }
  }
  const [sqr, variance] = app.gradStats(app.init_batch_size, epoch);
  return { perf: fitPerfParams(points), grad: { sqr, var: variance }, limits };
}

/** Random packed initial allocations: jobs take slots in random order until the nodes are full. */
function initialAllocations(
  nodes: readonly NodeInfo[],
  jobs: readonly PolicyJob[],
  random: () => number,
  sameType = (_a: number, _b: number) => true,
): Record<string, Allocation> {
  const allocations: Record<string, Allocation> = {};
  const free = nodes.map((n) => n.gpus);
  let node = 0;
  for (const job of jobs) {
    if (random() < 0.6 || node >= nodes.length) continue;
    const want = Math.min(job.max_replicas, 1 << Math.floor(random() * 4));
    const allocation: number[] = [];
    while (allocation.length < want && node < nodes.length) {
      if ((free[node] as number) === 0 || (allocation.length > 0 && !sameType(allocation[0]!, node))) {
        if (allocation.length > 0 && (free[node] as number) > 0) break;
        node++;
      } else {
        free[node] = (free[node] as number) - 1;
        allocation.push(node);
      }
    }
    if (allocation.length > 0) allocations[job.id] = allocation;
  }
  return allocations;
}

/**
 * One GPU type: `nodeCount` x `gpusPerNode` GPUs and `jobCount` jobs of the six Pollux
 * applications (bench:policy's generator: the same draws for the same arguments and seed).
 */
export function generateOneType(nodeCount: number, gpusPerNode: number, jobCount: number, seed = 42): GeneratedCluster {
  const generator = new Random(seed);
  const random = (): number => generator.next();
  const apps = applicationNames
    .map((name) => getApplication(name, defaultTracesDir()))
    .filter((a): a is TraceApplication => a !== undefined);
  const models = new Map(
    apps.map((app) => {
      const fit = (e: number) =>
        fittedModel(app, (p, b) => app.throughput(p, b), Math.min(e * 10, app.completion_epoch));
      return [app.name, [0, 1, 2].map(fit)] as const;
    }),
  );
  const nodes: NodeInfo[] = Array.from({ length: nodeCount }, (_, index) => ({
    index,
    name: `n${index}`,
    gpus: gpusPerNode,
    preemptible: false,
  }));
  const now_s = 86_400;
  const jobs: PolicyJob[] = Array.from({ length: jobCount }, (_, j) => {
    const app = apps[Math.floor(random() * apps.length)] as TraceApplication;
    const ncf = app.name === 'ncf';
    const profiled = [0, 1, 2, 4, 8, 16, 32][Math.floor(random() * 7)] as number;
    const model = (models.get(app.name) as GoodputModel[])[Math.floor(random() * 3)] as GoodputModel;
    const age_s = Math.floor(random() * 8 * 3600);
    return {
      id: `${app.name}-${j}`,
      submitted_at_s: now_s - age_s,
      attained_service_gpu_s: Math.floor(random() * age_s * 4),
      min_replicas: 0,
      max_replicas: ncf ? 1 : Math.min(nodeCount * gpusPerNode, Math.floor(app.max_batch_size / app.min_local_bsz)),
      max_profiled_replicas: ncf ? Math.min(profiled, 1) : profiled,
      restarts: Math.floor(random() * 10),
      preemptible: random() > 0.02,
      priority: 0,
      limits: app.limits,
      remaining_samples: Math.floor(random() * app.target_progress * app.init_batch_size),
      // A copy per job: jobs never share a model object, so memos only help across rounds.
      ...(ncf ? { fixed_batch_size: 32768 } : {}),
      ...(profiled > 0 ? { model: { ...model } } : {}),
    };
  });
  return { nodes, jobs, allocations: initialAllocations(nodes, jobs, random), now_s };
}

/**
 * Several GPU types (`parts`, Sia's types) and `jobCount` jobs of Sia's applications (traces in
 * `tracesDir`): each job has run on one or two types (a fitted model there), Sia's one-GPU rates
 * on every type, random remaining work; initial allocations each on one type.
 */
export function generateTyped(
  parts: readonly ClusterPart[],
  tracesDir: string,
  jobCount: number,
  seed = 42,
): GeneratedCluster {
  const generator = new Random(seed);
  const random = (): number => generator.next();
  const types = parts.map((p) => p.type);
  const apps = [...loadHeteroApplications(tracesDir, types).values()];
  const models = new Map<string, GoodputModel[]>();
  for (const app of apps)
    for (const t of types) {
      const tt = app.byType.get(t)!;
      const epochs = [0, 1, 2].map((e) => Math.min(e * 10, app.base.completion_epoch));
      models.set(
        `${app.name}/${t}`,
        epochs.map((e) => fittedModel(app.base, (p, b) => tt.throughput(p, b), e, typeLimits(app, t))),
      );
    }
  const nodes = clusterNodes(parts);
  const now_s = 86_400;
  const jobs: PolicyJob[] = Array.from({ length: jobCount }, (_, j) => {
    const app = apps[Math.floor(random() * apps.length)] as HeteroApplication;
    const ran = new Set([types[Math.floor(random() * types.length)]!]);
    if (random() < 0.3) ran.add(types[Math.floor(random() * types.length)]!);
    const variant = Math.floor(random() * 3);
    const profiled = [0, 1, 2, 4, 8, 16][Math.floor(random() * 6)] as number;
    const max_profiled: Record<string, number> = {};
    const one: Record<string, number> = {};
    const own = new Map<string, GoodputModel>();
    for (const t of types) {
      max_profiled[t] = profiled > 0 && ran.has(t) ? profiled : 0;
      one[t] = app.byType.get(t)!.one_gpu_samples_per_s;
      if (max_profiled[t]! > 0) own.set(t, { ...models.get(`${app.name}/${t}`)![variant]! });
    }
    const age_s = Math.floor(random() * 8 * 3600);
    const remaining = Math.floor(random() * app.base.target_progress * app.base.init_batch_size) + 1;
    const restarts = Math.floor(random() * 10);
    const ncf = app.name === 'ncf';
    const first = own.values().next().value;
    return {
      id: `${app.name}-${j}`,
      submitted_at_s: now_s - age_s,
      attained_service_gpu_s: Math.floor(random() * age_s * 4),
      min_replicas: 0,
      max_replicas: jobMaxReplicas(app),
      max_profiled_replicas: profiled,
      profile_key: app.name,
      restarts,
      preemptible: true,
      priority: 0,
      limits: typeLimits(app, types[0]!),
      remaining_samples: remaining,
      ...(ncf ? { fixed_batch_size: 32768 } : {}),
      ...(first ? { model: first } : {}),
      per_type: buildJobTypes({
        types,
        own_type: own.keys().next().value,
        model: (t) => own.get(t),
        limits: (t) => typeLimits(app, t),
        max_profiled,
        one_gpu_samples_per_s: one,
        remaining_samples: remaining,
        restart_s: app.rescale_s,
        restarting: false,
      }),
    };
  });
  const typeOf = (n: number) => nodes[n]!.gpu_type;
  return {
    nodes,
    jobs,
    allocations: initialAllocations(nodes, jobs, random, (a, b) => typeOf(a) === typeOf(b)),
    now_s,
  };
}

/**
 * Makes every job's models its own (`cluster` is changed): each fitted model's compute cost per
 * micro-step (alpha_c) scaled by 1 + 1e-6 x the job's position, on every type. The generators
 * copy a few fitted models to every job, so a policy's memo by model content computes a few
 * speedup tables; a cluster whose jobs have fitted themselves has one per job.
 */
export function distinctModels(cluster: GeneratedCluster): void {
  cluster.jobs.forEach((job, k) => {
    const own = (m: GoodputModel): GoodputModel => ({
      ...m,
      perf: { ...m.perf, alpha_c: m.perf.alpha_c * (1 + (k + 1) * 1e-6) },
    });
    const before = job.model;
    const model = before && own(before);
    if (model) job.model = model;
    const types = job.per_type;
    if (!types) return;
    // The job's model stays one object with its model on the type it came from.
    const byType = new Map<string, GoodputModel | undefined>();
    const typed = (t: string): GoodputModel | undefined => {
      if (!byType.has(t)) {
        const m = types.model(t);
        byType.set(t, m === undefined ? undefined : m === before ? model : own(m));
      }
      return byType.get(t);
    };
    job.per_type = { ...types, model: typed };
  });
}

/** The snapshot of `round` (60 s apart) of `cluster`, with `allocations` the last round's decision. */
export function roundSnapshot(
  cluster: GeneratedCluster,
  round: number,
  allocations: Record<string, Allocation>,
): ClusterSnapshot {
  return { now_s: cluster.now_s + round * 60, nodes: cluster.nodes, jobs: cluster.jobs, allocations };
}

/**
 * Feeds a round back: allocated jobs gain `interval_s` of service per GPU and lose remaining
 * work (per_type's remaining work is fixed at generation: typed jobs keep theirs).
 */
export function feedBack(jobs: PolicyJob[], allocations: Readonly<Record<string, Allocation>>, interval_s = 60): void {
  for (const job of jobs) {
    const replicas = allocations[job.id]?.length ?? 0;
    job.attained_service_gpu_s += interval_s * replicas;
    if (job.remaining_samples !== undefined)
      job.remaining_samples = Math.max(1, job.remaining_samples - interval_s * replicas * job.limits.init_batch_size);
    if (replicas > job.max_profiled_replicas) job.max_profiled_replicas = replicas;
  }
}

/** Four types, a quarter of the GPUs each: aws 4-GPU nodes, rtx/dgx/dgx-ext 8-GPU nodes. */
export function fourTypes(gpus: number): ClusterPart[] {
  const quarter = gpus / 4;
  return [
    { type: 'aws', nodes: quarter / 4, gpus_per_node: 4 },
    { type: 'rtx', nodes: quarter / 8, gpus_per_node: 8 },
    { type: 'dgx', nodes: quarter / 8, gpus_per_node: 8 },
    { type: 'dgx-ext', nodes: quarter / 8, gpus_per_node: 8 },
  ];
}

/**
 * A case of bench:scale: `gpus` GPUs of one type (4-GPU nodes) or of four (fourTypes, Sia's
 * applications from `tracesDir`), `jobs` jobs, every job's models its own with `distinct`.
 */
export function generateCase(
  types: 1 | 4,
  gpus: number,
  jobs: number,
  tracesDir: string,
  distinct = false,
): GeneratedCluster {
  const cluster = types === 1 ? generateOneType(gpus / 4, 4, jobs) : generateTyped(fourTypes(gpus), tracesDir, jobs);
  if (distinct) distinctModels(cluster);
  return cluster;
}
