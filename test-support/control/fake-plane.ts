/**
 * The control plane in one process for tests of policy behaviour that needs only decisions: a
 * Controller with a real SQLite store on the FakeBackend and a FakeClock (as
 * src/control/controller.test.ts builds one), and a synthetic trainer that runs as a fake-backend
 * program and reports through `Controller.report` in-process. It follows
 * test-support/control/synthetic-trainer.ts step for step (the same trace-driven step times,
 * samples, limits, checkpoint on SIGTERM, exit 143 and resume), so what the real-process tests
 * see in wall seconds these see in fake seconds, in milliseconds of wall time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackendNode } from '../../src/backends/backend.js';
import { FakeBackend, FakeCluster, fakeNode } from '../../src/backends/fake-backend.js';
import { jobSpecSchema, type JobSpec, type JobSpecInput } from '../../src/core/job-spec.js';
import { parsePolicyParams } from '../../src/policy/policy-params.js';
import { createSharedPolicy, findPolicy } from '../../src/policy/registry.js';
import type { SharesConfig } from '../../src/policy/shares/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { JobRecord } from '../../src/store/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { packagePath } from '../../src/util/package-root.js';
import { Controller } from '../../src/control/controller.js';

/** The trainer program (run by the fake backend: `node -e SCRIPT -- CONFIG`); see synthetic-trainer.ts. */
const TRAINER_SCRIPT = `
const fs = require('fs');
const path = require('path');
const plane = require('goodput-plane');
const cfg = JSON.parse(process.argv[1]);
const env = process.env;
const rank = Number(env.RANK || 0), world = Number(env.WORLD_SIZE || 1), nodes = Number(env.GOODPUT_NUM_NODES || 1);
const attempt = Number(env.GOODPUT_ATTEMPT || 0);
const ckptPath = path.join(env.GOODPUT_CHECKPOINT_DIR, 'synthetic.json');
const donePath = path.join(env.GOODPUT_CHECKPOINT_DIR, 'synthetic.done');
const typeFactor = (cfg.type_slowdown || {})[env.GOODPUT_GPU_TYPE || ''] || 1;
const slowdown = (world > 1 ? cfg.multi_replica_slowdown : 1) * typeFactor;
const rows = fs.readFileSync(cfg.trace_path, 'utf8').trim().split('\\n').slice(1).map((l) => l.split(','));
const pick = rows.filter((r) => r[0] === String(Math.min(world, 9)));
const trace = (pick.length > 0 ? pick : rows.filter((r) => r[0] === '1'))
  .map((r) => ({ bsz: Number(r[1]), step: Number(r[2]), sync: Number(r[3]) })).sort((a, b) => a.bsz - b.bsz);
const minBsz = trace[0].bsz, maxBsz = trace[trace.length - 1].bsz;
const limits = {
  init_batch_size: minBsz * 4, max_batch_size: maxBsz * 8, min_local_bsz: minBsz, max_local_bsz: maxBsz, accumulation: true,
};
const timesFor = (bsz) => {
  let best = trace[0];
  for (const t of trace) if (Math.abs(t.bsz - bsz) < Math.abs(best.bsz - bsz)) best = t;
  return { step: best.sync + (best.step - best.sync) * (bsz / best.bsz), sync: best.sync };
};
const state = fs.existsSync(ckptPath) ? JSON.parse(fs.readFileSync(ckptPath, 'utf8')) : { step: 0, samples: 0 };
let local_bsz = Math.max(minBsz, Math.ceil(limits.init_batch_size / world));
let accum_steps = 0, stopping = false, pending = [], sentLimits = false;
let lastReport = plane.now_ms();
let checkpoint_time_s = fs.existsSync(ckptPath) ? plane.now_ms() / 1000 : null;
const save = () => {
  if (rank !== 0) return;
  fs.writeFileSync(ckptPath + '.tmp', JSON.stringify(state));
  fs.renameSync(ckptPath + '.tmp', ckptPath);
  checkpoint_time_s = plane.now_ms() / 1000;
};
const report = () => {
  if (rank !== 0 || pending.length === 0) return;
  const body = {
    job_id: env.GOODPUT_JOB_ID, attempt, limits: sentLimits ? undefined : limits, reports: pending, checkpoint_on_stop: true,
  };
  pending = [];
  plane.report(body).then((config) => {
    sentLimits = true;
    local_bsz = Math.min(maxBsz, Math.max(minBsz, config.local_bsz));
    accum_steps = Math.min(8, Math.max(0, config.accum_steps));
  }, () => {});
};
if (cfg.record_env) {
  const seen = { CUDA_VISIBLE_DEVICES: env.CUDA_VISIBLE_DEVICES, GOODPUT_GPU_TYPE: env.GOODPUT_GPU_TYPE };
  const file = path.join(env.GOODPUT_CHECKPOINT_DIR, 'env-' + attempt + '-' + rank + '.json');
  fs.writeFileSync(file, JSON.stringify(seen));
}
process.on('SIGTERM', () => { stopping = true; });
let step_time_s = 0;
const tick = () => {
  if (stopping) { save(); process.exit(143); }
  if (rank !== 0) { if (fs.existsSync(donePath)) process.exit(0); setTimeout(tick, 50); return; }
  if (state.samples >= cfg.samples) {
    save();
    fs.writeFileSync(donePath, String(state.step));
    report();
    process.exit(0);
  }
  const t = timesFor(local_bsz);
  step_time_s = (t.step * (accum_steps + 1) - t.sync * accum_steps) * slowdown;
  setTimeout(stepped, step_time_s * cfg.time_scale * 1000);
};
const stepped = () => {
  if (stopping) return tick();
  const t = timesFor(local_bsz);
  state.step += 1;
  state.samples += local_bsz * world * (accum_steps + 1);
  const entry = {
    time_s: plane.now_ms() / 1000, step: state.step, num_nodes: nodes, num_replicas: world, local_bsz, accum_steps,
    step_time_s, sync_time_s: t.sync * typeFactor, grad_sqr: 1.0, grad_var: 4.0, samples: state.samples,
  };
  if (!cfg.unknown_length) entry.remaining_samples = Math.max(0, cfg.samples - state.samples);
  pending.push(entry);
  if (plane.now_ms() - lastReport >= cfg.report_every_s * 1000) {
    lastReport = plane.now_ms();
    save();
    for (const e of pending) e.checkpoint_time_s = checkpoint_time_s;
    report();
  }
  tick();
};
tick();
`;

/** Options of the fake trainer, as synthetic-trainer.ts's flags. */
export interface FakeTrainerOptions {
  samples?: number;
  time_scale?: number;
  report_every_s?: number;
  unknown_length?: boolean;
  multi_replica_slowdown?: number;
  /** GPU type name -> factor: every step that much slower on that type. */
  type_slowdown?: Record<string, number>;
  /** Each replica writes the devices and type it was given to `env-ATTEMPT-RANK.json` in its checkpoint dir. */
  record_env?: boolean;
}

/** The command of a fake trainer job. */
export function fakeTrainer(options: FakeTrainerOptions = {}): string[] {
  const cfg = {
    samples: 20_000,
    time_scale: 1,
    report_every_s: 0.3,
    unknown_length: false,
    multi_replica_slowdown: 1,
    type_slowdown: {},
    ...options,
    trace_path: packagePath('data', 'pollux', 'traces', 'cifar10', 'placements.csv'),
  };
  return [process.execPath, '-e', TRAINER_SCRIPT, '--', JSON.stringify(cfg)];
}

/** The command of a plain job that runs `seconds` and exits 0 (never reports, as PLAIN_20S). */
export function fakePlain(seconds: number): string[] {
  return [process.execPath, '-e', `setTimeout(() => process.exit(0), ${seconds * 1000});`];
}

/** A control plane on the fake backend and clock; `close()` when done. */
export interface FakePlane {
  clock: FakeClock;
  store: SqliteStore;
  controller: Controller;
  cluster: FakeCluster;
  /** The data directory: a job's checkpoint dir is jobs/ID/checkpoint under it. */
  data_dir: string;
  /** Submits as `user` (default 'u'). */
  submit(spec: JobSpecInput, user?: string): Promise<JobRecord>;
  job(id: string): Promise<JobRecord>;
  /** Advances fake time until `f` returns a value other than undefined; throws after `limit_s` fake seconds. */
  waitFor<T>(what: string, limit_s: number, f: () => Promise<T | undefined>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Starts a controller as `goodput up --policy POLICY --interval-s ... --grace-s ...
 * --policy-param ...` would, on `nodes` (default one node of `slots` CPU slots).
 */
export async function fakePlane(options: {
  slots?: number;
  nodes?: BackendNode[];
  policy?: string;
  interval_s: number;
  grace_s: number;
  params?: readonly string[];
  /** The shares in force (as `goodput up --shares`), asked every round. */
  shares?: () => SharesConfig;
  /** As a backend that picks the devices within a node (Slurm): a hung rank drains its whole node. */
  hangDrains?: 'node';
}): Promise<FakePlane> {
  const root = mkdtempSync(join(tmpdir(), 'goodput-fake-plane-'));
  const clock = new FakeClock(1_700_000_000_000);
  const store = new SqliteStore(':memory:', { now_ms: () => clock.now_ms() });
  const cluster = new FakeCluster(options.nodes ?? [fakeNode('local', options.slots ?? 2)], clock);
  const name = options.policy ?? 'goodput';
  const params = parsePolicyParams(findPolicy(name)!, options.params ?? []);
  // Loads the MILP solver where the policy uses one (in real time, before the fake clock races).
  const policy = await createSharedPolicy(name, { seed: 0, params });
  const controller = new Controller({
    store,
    backend: Object.assign(new FakeBackend(cluster), options.hangDrains ? { hangDrains: options.hangDrains } : {}),
    policy,
    data_dir: root,
    secret: 's',
    api_url: 'http://127.0.0.1:1',
    interval_s: options.interval_s,
    grace_s: options.grace_s,
    clock,
    ...(options.shares ? { shares: options.shares } : {}),
  });
  cluster.modules['goodput-plane'] = {
    now_ms: () => clock.now_ms(),
    report: (body: Parameters<Controller['report']>[0]) => controller.report(body),
  };
  await controller.start();
  const job = async (id: string) => (await store.getJob(id))!;
  return {
    clock,
    store,
    controller,
    cluster,
    job,
    data_dir: root,
    submit: (input, user = 'u') => {
      const spec: JobSpec = { ...jobSpecSchema.parse({ workdir: root, ...input }), workdir: root };
      return controller.submit(spec, user, user);
    },
    async waitFor(what, limit_s, f) {
      let found: Awaited<ReturnType<typeof f>>;
      try {
        await clock.until(async () => (found = await f()) !== undefined, limit_s * 1000);
      } catch {
        throw new Error(`waited ${limit_s} s of fake time for ${what}`);
      }
      return found!;
    },
    async close() {
      await controller.stop();
      await store.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
