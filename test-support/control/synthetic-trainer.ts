/**
 * A synthetic trainer that follows docs/contract.md, for tests and demos without GPUs: it
 * advances optimizer steps at the step time measured in the application traces
 * (data/pollux/traces/<app>/placements.csv, scaled by --time-scale), reports measurements to
 * the control plane (rank 0), applies the configuration it gets back, checkpoints atomically on
 * SIGTERM and exits 143, and resumes from its checkpoint. Progress is counted in samples, so
 * more replicas finish sooner; every report carries the samples left (`remaining_samples`,
 * unless `--unknown-length`) and the time of its newest checkpoint (`checkpoint_time_s`, it
 * checkpoints before every report), and says that it checkpoints when stopped.
 *
 *   node synthetic-trainer.js [--app cifar10] [--samples N] [--time-scale F]
 *        [--fail-at-step K] [--report-every-s S] [--unknown-length] [--multi-replica-slowdown F]
 *        [--type-slowdown TYPE=F[,TYPE=F...]]
 *
 * `--multi-replica-slowdown F` makes every step F times slower on more than one replica (a job
 * that scales badly, whatever its model predicted from one replica). `--type-slowdown t4=8` makes
 * every step (and its sync) 8 times slower on GPUs of type `t4`, the type the control plane names
 * in GOODPUT_GPU_TYPE (docs/contract.md): a job that runs much faster on one GPU type.
 *
 * Log lines the tests parse: `synthetic: resumed step=S samples=N attempt=A world=W`,
 * `synthetic: checkpointed step=S samples=N attempt=A`, `synthetic: done step=S samples=N`.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packagePath } from '../../src/util/package-root.js';

interface Checkpoint {
  step: number;
  samples: number;
}

const { values } = parseArgs({
  options: {
    app: { type: 'string', default: 'cifar10' },
    samples: { type: 'string', default: '20000' },
    'time-scale': { type: 'string', default: '1' },
    'fail-at-step': { type: 'string' },
    'report-every-s': { type: 'string', default: '0.3' },
    'unknown-length': { type: 'boolean', default: false },
    'multi-replica-slowdown': { type: 'string', default: '1' },
    'type-slowdown': { type: 'string', default: '' },
  },
  strict: true,
});

const env = process.env;
const rank = Number(env.RANK ?? 0);
const world = Number(env.WORLD_SIZE ?? 1);
const nodes = Number(env.GOODPUT_NUM_NODES ?? 1);
const attempt = Number(env.GOODPUT_ATTEMPT ?? 0);
const ckptDir = env.GOODPUT_CHECKPOINT_DIR ?? '.';
const ckptPath = join(ckptDir, 'synthetic.json');
const donePath = join(ckptDir, 'synthetic.done');
const target = Number(values.samples);
const timeScale = Number(values['time-scale']);
const failAt = values['fail-at-step'] === undefined ? undefined : Number(values['fail-at-step']);
const reportEvery_ms = Number(values['report-every-s']) * 1000;
const typeFactors = new Map(
  values['type-slowdown']
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]),
);
const typeFactor = typeFactors.get(env.GOODPUT_GPU_TYPE ?? '') ?? 1;
const slowdown = (world > 1 ? Number(values['multi-replica-slowdown']) : 1) * typeFactor;

/** Step and sync time by local batch for this world size (single node: placement = "W"). */
function loadTrace(app: string, replicas: number): { bsz: number; step: number; sync: number }[] {
  const text = readFileSync(packagePath('data', 'pollux', 'traces', app, 'placements.csv'), 'utf8');
  const rows = text
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','));
  const want = String(Math.min(replicas, 9));
  const pick = rows.filter((r) => r[0] === want);
  const use = pick.length > 0 ? pick : rows.filter((r) => r[0] === '1');
  return use.map((r) => ({ bsz: Number(r[1]), step: Number(r[2]), sync: Number(r[3]) })).sort((a, b) => a.bsz - b.bsz);
}

const trace = loadTrace(values.app, world);
const minBsz = trace[0]!.bsz;
const maxBsz = trace[trace.length - 1]!.bsz;
const limits = {
  init_batch_size: minBsz * 4,
  max_batch_size: maxBsz * 8,
  min_local_bsz: minBsz,
  max_local_bsz: maxBsz,
  accumulation: true,
};

function timesFor(bsz: number): { step: number; sync: number } {
  let best = trace[0]!;
  for (const t of trace) if (Math.abs(t.bsz - bsz) < Math.abs(best.bsz - bsz)) best = t;
  // Linear in the batch around the nearest measured point.
  const scale = bsz / best.bsz;
  return { step: best.sync + (best.step - best.sync) * scale, sync: best.sync };
}

const log = (line: string) => process.stdout.write(`synthetic: ${line}\n`);
const state: Checkpoint = existsSync(ckptPath)
  ? (JSON.parse(readFileSync(ckptPath, 'utf8')) as Checkpoint)
  : { step: 0, samples: 0 };
let local_bsz = Math.max(minBsz, Math.ceil(limits.init_batch_size / world));
let accum_steps = 0;
let stopping = false;
let pending: Record<string, unknown>[] = [];
let lastReport = Date.now();
let sentLimits = false;
/** When the newest checkpoint this attempt can resume from became durable (epoch s). */
let checkpoint_time_s: number | null = existsSync(ckptPath) ? Date.now() / 1000 : null;

function saveCheckpoint(): void {
  if (rank !== 0) return;
  const tmp = ckptPath + '.tmp';
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, ckptPath);
  checkpoint_time_s = Date.now() / 1000;
}

process.on('SIGTERM', () => {
  stopping = true;
});

async function report(): Promise<void> {
  if (rank !== 0 || pending.length === 0 || !env.GOODPUT_API) return;
  const body = { attempt, ...(sentLimits ? {} : { limits }), reports: pending, checkpoint_on_stop: true };
  pending = [];
  try {
    const res = await fetch(`${env.GOODPUT_API}/v1/jobs/${env.GOODPUT_JOB_ID}/reports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.GOODPUT_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.ok) {
      sentLimits = true;
      const { config } = (await res.json()) as { config: { local_bsz: number; accum_steps: number } };
      local_bsz = Math.min(maxBsz, Math.max(minBsz, config.local_bsz));
      accum_steps = Math.min(8, Math.max(0, config.accum_steps));
    }
  } catch {
    // The control plane may be down (restart): keep training with the last configuration.
  }
}

async function main(): Promise<number> {
  log(`resumed step=${state.step} samples=${state.samples} attempt=${attempt} world=${world}`);
  for (;;) {
    if (stopping) {
      saveCheckpoint();
      log(`checkpointed step=${state.step} samples=${state.samples} attempt=${attempt}`);
      return 143;
    }
    if (rank !== 0) {
      if (existsSync(donePath)) return 0;
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    if (state.samples >= target) {
      saveCheckpoint();
      writeFileSync(donePath, String(state.step));
      log(`done step=${state.step} samples=${state.samples}`);
      await report();
      return 0;
    }
    const t = timesFor(local_bsz);
    const step_time_s = (t.step * (accum_steps + 1) - t.sync * accum_steps) * slowdown;
    await new Promise((r) => setTimeout(r, step_time_s * timeScale * 1000));
    if (stopping) continue;
    state.step += 1;
    state.samples += local_bsz * world * (accum_steps + 1);
    if (failAt !== undefined && attempt === 0 && state.step === failAt) {
      log(`failing on purpose at step=${state.step}`);
      return 3;
    }
    pending.push({
      time_s: Date.now() / 1000,
      step: state.step,
      num_nodes: nodes,
      num_replicas: world,
      local_bsz,
      accum_steps,
      step_time_s,
      sync_time_s: t.sync * typeFactor,
      grad_sqr: 1.0,
      grad_var: 4.0,
      samples: state.samples,
      ...(values['unknown-length'] ? {} : { remaining_samples: Math.max(0, target - state.samples) }),
    });
    if (Date.now() - lastReport >= reportEvery_ms) {
      lastReport = Date.now();
      saveCheckpoint();
      for (const entry of pending) entry.checkpoint_time_s = checkpoint_time_s;
      await report();
    }
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`synthetic: ${(error as Error).stack}\n`);
    process.exit(1);
  },
);
