import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuSlots } from '../../backends/local/devices.js';
import { cpuNodeFixture } from '../testing/control-driver.js';
import { LocalBackend } from '../../backends/local/local-backend.js';
import { scopedKey } from '../../core/profile-scope.js';
import { fitPerfParams } from '../../goodput/fit.js';
import { modelPoints } from '../../goodput/key-profile.js';
import { fitNetworkModel, predictPerfParams } from '../../goodput/network-model.js';
import { accumStepTime_s, optimStepTime_s } from '../../goodput/throughput.js';
import type { PerfParams, ProfilePoint } from '../../goodput/types.js';
import { GoodputPolicy } from '../../policy/goodput/index.js';
import { trainSpecFixture } from '../../store/job-fixture.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { JobSpec, StoredKeyProfile } from '../../store/types.js';
import { Controller } from '../controller.js';
import { multiNodeSignature } from '../../model/network.js';
import { NetworkBook } from './network-book.js';
import { ProfileBook } from './profile-book.js';
import { ownProfilePoints, ReportIngest } from './report-ingest.js';

const H100 = 'NVIDIA H100 80GB HBM3';
const cpuNode = cpuNodeFixture(4);
const limits = { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 16, max_local_bsz: 256, accumulation: true };
const spec = (profile: string): JobSpec => trainSpecFixture({ profile });

// Cross-node sync much slower than intra-node: a one-node fit extrapolates it far too fast.
const resnet: PerfParams = {
  alpha_c: 0.02,
  beta_c: 0.001,
  alpha_n: 0.3,
  beta_n: 0.02,
  alpha_r: 0.01,
  beta_r: 0.002,
  gamma: 1.5,
};
const bert: PerfParams = {
  alpha_c: 0.05,
  beta_c: 0.002,
  alpha_n: 1.5,
  beta_n: 0.03,
  alpha_r: 0.02,
  beta_r: 0.003,
  gamma: 1.8,
};
const other: PerfParams = {
  alpha_c: 0.03,
  beta_c: 0.001,
  alpha_n: 0.05,
  beta_n: 0.001,
  alpha_r: 0.01,
  beta_r: 0.001,
  gamma: 2.5,
};
const fresh: PerfParams = {
  alpha_c: 0.03,
  beta_c: 0.0015,
  alpha_n: 0.4,
  beta_n: 0.02,
  alpha_r: 0.015,
  beta_r: 0.002,
  gamma: 1.6,
};

const point = (perf: PerfParams, num_nodes: number, num_replicas: number, local_bsz: number): ProfilePoint => ({
  num_nodes,
  num_replicas,
  local_bsz,
  accum_step_time_s: accumStepTime_s(perf, local_bsz),
  optim_step_time_s: optimStepTime_s(perf, num_nodes, num_replicas, local_bsz),
});
const oneNode: [number, number][] = [
  [1, 32],
  [1, 64],
  [1, 128],
  [2, 32],
  [2, 64],
  [4, 64],
];
const multiNode: [number, number, number][] = [
  [2, 4, 64],
  [2, 8, 64],
  [4, 16, 64],
];
const profilePoints = (perf: PerfParams) => [
  ...oneNode.map(([r, b]) => point(perf, 1, r, b)),
  ...multiNode.map(([n, r, b]) => point(perf, n, r, b)),
];

/** Stores a key profile of other jobs measured on one and several nodes, with the model's parameter count. */
async function seed(
  store: SqliteStore,
  key: string,
  gpu_type: string,
  perf: PerfParams,
  model_parameters: number,
): Promise<void> {
  await store.mergeKeyProfile({
    key: scopedKey(key, 'u'),
    gpu_type,
    job_id: `${key}-earlier`,
    points: profilePoints(perf),
    grad: [],
    limits: null,
    model_parameters,
  });
}

/** What a job measured at `configs` (nodes, replicas, local batch) as its reports, from `perf`. */
const reportsOf = (perf: PerfParams, configs: readonly [number, number, number][], model_parameters?: number) =>
  configs.map(([n, r, b], step) => {
    const p = point(perf, n, r, b);
    return {
      time_s: 1e9 + step,
      step,
      num_nodes: n,
      num_replicas: r,
      local_bsz: b,
      accum_steps: 0,
      step_time_s: p.optim_step_time_s,
      sync_time_s: p.optim_step_time_s - p.accum_step_time_s,
      grad_sqr: 1,
      grad_var: 20,
      samples: step * b,
      remaining_samples: 1e6,
      ...(model_parameters ? { model_parameters } : {}),
    };
  });
const onOneNode: [number, number, number][] = oneNode.map(([r, b]) => [1, r, b]);
const P = 25_000_000;

function open(network: boolean, lines: string[] = []) {
  const store = new SqliteStore(':memory:');
  const nodes = () => [cpuNode];
  const profiles = new ProfileBook(store, nodes, (l) => lines.push(l));
  const ingest = new ReportIngest({
    store,
    refit_interval_s: 5,
    now_ms: () => 0,
    log: (l) => lines.push(l),
    request_round: () => {},
    profiles,
    ...(network ? { network: new NetworkBook(store, nodes) } : {}),
  });
  return { store, ingest, lines };
}

/** Submits a job of `key`, posts its reports (its first refit is awaited) and returns its model and own points. */
async function run(store: SqliteStore, report: (id: string) => Promise<unknown>, id: string, key: string) {
  await store.createJob({ id, name: id, user: 'u', spec: spec(key) }, 'u');
  await report(id);
  return { perf: (await store.getJob(id))!.perf!, points: await ownProfilePoints(store, id) };
}

const ofType = async (store: SqliteStore, gpu_type: string): Promise<StoredKeyProfile[]> =>
  (await store.listKeyProfiles()).filter((p) => p.gpu_type === gpu_type);

describe('the network model in the control plane', () => {
  it('the first job of a key, measured on one node, gets its cross-node terms from the network model; without the knob, its own fit', async () => {
    const results = [];
    for (const network of [true, false]) {
      const { store, ingest } = open(network);
      await seed(store, 'resnet', 'cpu', resnet, 11_000_000);
      await seed(store, 'bert', 'cpu', bert, 110_000_000);
      const net = fitNetworkModel(await ofType(store, 'cpu'));
      const job = await run(
        store,
        (id) => ingest.report({ job_id: id, attempt: 0, limits, reports: reportsOf(fresh, onOneNode, P) }),
        'new',
        'gpt',
      );
      await ingest.stop();
      results.push({ ...job, net });
      await store.close();
    }
    const [on, off] = results;
    assert.ok(on!.net?.parameter_map, 'both profiles carry a parameter count');
    assert.deepEqual(
      on!.perf,
      predictPerfParams(on!.points, on!.net, P),
      "predicted with the job's own parameter count",
    );
    assert.notDeepEqual(on!.perf, predictPerfParams(on!.points, on!.net), 'the count matters');
    const own = fitPerfParams(on!.points);
    assert.notEqual(on!.perf.alpha_n, own.alpha_n);
    assert.notEqual(on!.perf.beta_n, own.beta_n);
    assert.deepEqual(off!.perf, fitPerfParams(off!.points), 'knob off: unchanged');
  });

  it("a job measured on several nodes, and one that starts from its key's profile, keep their own fit", async () => {
    const { store, ingest } = open(true);
    await seed(store, 'resnet', 'cpu', resnet, 11_000_000);
    await seed(store, 'bert', 'cpu', bert, 110_000_000);
    const post = (perf: PerfParams, configs: [number, number, number][]) => (id: string) =>
      ingest.report({ job_id: id, attempt: 0, limits, reports: reportsOf(perf, configs, P) });
    const net = fitNetworkModel(await ofType(store, 'cpu'));
    const single = await run(store, post(fresh, onOneNode), 'single', 'gpt');
    assert.deepEqual(
      single.perf,
      predictPerfParams(single.points, net, P),
      'the control: one node, no profile of others',
    );
    const spanning = await run(store, post(fresh, [...onOneNode, [2, 4, 64], [2, 8, 64]]), 'spanning', 't5');
    assert.deepEqual(spanning.perf, fitPerfParams(spanning.points));
    const second = await run(store, post(resnet, onOneNode), 'second', 'resnet');
    const profile = (await store.getKeyProfile(scopedKey('resnet', 'u'), 'cpu'))!;
    assert.deepEqual(profile.job_ids, ['resnet-earlier', 'second'], 'it agreed with the profile and started from it');
    assert.deepEqual(second.perf, fitPerfParams(modelPoints(second.points, profile)));
    await ingest.stop();
    await store.close();
  });

  it("profiles of another GPU type are not used; the model is refitted when the job's type gains multi-node shapes", async () => {
    const { store, ingest } = open(true);
    await seed(store, 'resnet', H100, other, 11_000_000);
    await seed(store, 'bert', H100, other, 110_000_000);
    const post = (id: string) =>
      ingest.report({ job_id: id, attempt: 0, limits, reports: reportsOf(fresh, onOneNode, P) });
    const alone = await run(store, post, 'alone', 'gpt');
    assert.deepEqual(alone.perf, fitPerfParams(alone.points), 'no multi-node profile on cpu: its own fit');
    await seed(store, 'resnet', 'cpu', resnet, 11_000_000);
    await seed(store, 'bert', 'cpu', bert, 110_000_000);
    const net = fitNetworkModel(await ofType(store, 'cpu'));
    const mixed = fitNetworkModel(await store.listKeyProfiles());
    const later = await run(store, post, 'later', 'llama');
    assert.deepEqual(later.perf, predictPerfParams(later.points, net, P));
    assert.notDeepEqual(later.perf, predictPerfParams(later.points, mixed, P), 'the H100 profiles are not mixed in');
    await ingest.stop();
    await store.close();
  });

  it('a store error is logged and the job keeps its own fit', async () => {
    const { store, ingest, lines } = open(true);
    await seed(store, 'resnet', 'cpu', resnet, 11_000_000);
    await seed(store, 'bert', 'cpu', bert, 110_000_000);
    store.listKeyProfiles = () => Promise.reject(new Error('disk I/O error'));
    const job = await run(
      store,
      (id) => ingest.report({ job_id: id, attempt: 0, limits, reports: reportsOf(fresh, onOneNode, P) }),
      'new',
      'gpt',
    );
    assert.deepEqual(job.perf, fitPerfParams(job.points));
    assert.deepEqual(lines, ['network model for job new not read, its own fit is used: disk I/O error']);
    await ingest.stop();
    await store.close();
  });

  it("the controller uses it when the goodput policy's network_model knob is on", async () => {
    const perfOf = async (network_model: boolean) => {
      const store = new SqliteStore(':memory:');
      await seed(store, 'resnet', 'cpu', resnet, 11_000_000);
      await seed(store, 'bert', 'cpu', bert, 110_000_000);
      const controller = new Controller({
        store,
        backend: new LocalBackend({ devices: cpuSlots(4) }),
        policy: new GoodputPolicy({ network_model }),
        data_dir: '/nonexistent',
        secret: 's',
        api_url: '',
        interval_s: 60,
        grace_s: 1,
      });
      const job = await run(
        store,
        (id) => controller.report({ job_id: id, attempt: 0, limits, reports: reportsOf(fresh, onOneNode, P) }),
        'new',
        'gpt',
      );
      const net = fitNetworkModel(await ofType(store, 'cpu'));
      await controller.stop();
      await store.close();
      return { ...job, net };
    };
    const on = await perfOf(true);
    assert.deepEqual(on.perf, predictPerfParams(on.points, on.net, P));
    const off = await perfOf(false);
    assert.deepEqual(off.perf, fitPerfParams(off.points), 'off by default');
  });

  it('the signature changes with the set of multi-node shapes per key, not with one-node points or order', () => {
    const a = { key: 'a', points: [point(resnet, 1, 2, 32), point(resnet, 2, 4, 64)] };
    const b = { key: 'b', points: [point(bert, 2, 4, 64)] };
    assert.equal(multiNodeSignature([a]), 'a\n2:4');
    assert.equal(multiNodeSignature([a, b]), multiNodeSignature([b, a]));
    assert.notEqual(multiNodeSignature([a, b]), multiNodeSignature([a]));
    assert.equal(multiNodeSignature([{ key: 'c', points: [point(bert, 1, 4, 64)] }]), '');
  });
});
