/** Prometheus text exposition of the control plane's state (format 0.0.4). */
import type { Controller } from '../control/controller.js';
import { teamSeries } from './share-routes.js';
import { jobInsight, type JobInsight } from '../control/loop/insight.js';
import type { Store, UserUsage } from '../store/store.js';
import type { JobRecord } from '../store/types.js';
import { ACTIVE_STATES, PLACED_STATES, TERMINAL_STATES } from '../store/lifecycle.js';

/** Per-job gauges: name, help, value (null: not known yet, the sample is left out). */
const JOB_SERIES: readonly [string, string, (j: JobRecord, i: JobInsight) => number | null][] = [
  [
    'goodput_job_replicas',
    'Replicas allocated to the job (targeted while starting or rescaling).',
    (j) => j.allocation.length,
  ],
  [
    'goodput_job_batch_size',
    'Total batch size of the latest measurement (local x accumulation x replicas).',
    (_, i) => i.batch?.total ?? null,
  ],
  [
    'goodput_job_throughput_samples_per_second',
    'Measured training samples per second (latest measurement).',
    (_, i) => i.throughput_samples_s,
  ],
  [
    'goodput_job_statistical_efficiency',
    'Progress per sample relative to the initial batch size, in (0, 1].',
    (_, i) => i.efficiency,
  ],
  [
    'goodput_job_goodput',
    'Goodput: throughput x statistical efficiency (initial-batch-equivalent samples per second).',
    (_, i) => i.goodput,
  ],
  ['goodput_job_lr_scale', 'Learning-rate multiplier (AdaScale gain) at the current batch size.', (_, i) => i.lr_scale],
];

const label = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Per-job series of the active jobs, labelled job (id), name and user. */
async function jobSeries(store: Store, controller: Controller, jobs: readonly JobRecord[]): Promise<string[]> {
  const active = jobs.filter((j) => ACTIVE_STATES.includes(j.state));
  const profiles = await controller.profilesFor(active);
  const insights = await Promise.all(
    active.map(async (j) => jobInsight(j, (await store.listReports(j.id, 1))[0], profiles.get(j.id))),
  );
  return JOB_SERIES.flatMap(([name, help, value]) => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} gauge`,
    ...active.flatMap((j, k) => {
      const v = value(j, insights[k]!);
      return v === null ? [] : [`${name}{job="${label(j.id)}",name="${label(j.name)}",user="${label(j.user)}"} ${v}`];
    }),
  ]);
}

/**
 * Renders /metrics: jobs by state, devices total/allocated, reports, scheduling rounds, and (only
 * with `per_job`: they name jobs and users) the per-job series.
 */
export async function metricsText(store: Store, controller: Controller, per_job = true): Promise<string> {
  // Counted in the store and only active jobs read: the cost does not grow with finished jobs.
  const [counts, jobs] = await Promise.all([store.countJobsByState(), store.listJobs({ states: ACTIVE_STATES })]);
  const lines: string[] = ['# HELP goodput_jobs Jobs by state.', '# TYPE goodput_jobs gauge'];
  for (const state of [...ACTIVE_STATES, ...TERMINAL_STATES])
    lines.push(`goodput_jobs{state="${state}"} ${counts.get(state) ?? 0}`);
  // A job whose launch the backend holds (a PENDING Slurm job) uses no device yet.
  const allocated = jobs
    .filter((j) => PLACED_STATES.includes(j.state) && !controller.backendHolds.has(j.id))
    .reduce((n, j) => n + j.devices.length, 0);
  const s = controller.stats;
  lines.push(
    '# HELP goodput_gpus_total Devices (GPUs or CPU slots) managed by this server.',
    '# TYPE goodput_gpus_total gauge',
    `goodput_gpus_total ${controller.inventory().reduce((n, node) => n + node.devices.length, 0)}`,
    '# HELP goodput_gpus_allocated Devices allocated to jobs (running, starting or rescaling; not those of a launch the backend holds).',
    '# TYPE goodput_gpus_allocated gauge',
    `goodput_gpus_allocated ${allocated}`,
    '# HELP goodput_reports_total Measurements received on the report endpoint.',
    '# TYPE goodput_reports_total counter',
    `goodput_reports_total ${s.reports_total}`,
    '# HELP goodput_scheduler_round_duration_seconds Duration of scheduling rounds.',
    '# TYPE goodput_scheduler_round_duration_seconds summary',
    `goodput_scheduler_round_duration_seconds_sum ${s.round_seconds_sum}`,
    `goodput_scheduler_round_duration_seconds_count ${s.rounds_total}`,
    '# HELP goodput_scheduler_last_round_duration_seconds Duration of the latest scheduling round.',
    '# TYPE goodput_scheduler_last_round_duration_seconds gauge',
    `goodput_scheduler_last_round_duration_seconds ${s.last_round_s}`,
    ...(per_job ? await jobSeries(store, controller, jobs) : []),
    // Team names and their usage name groups of people: with the admin token, as the per-user series.
    ...(per_job ? await teamSeries(store, controller) : []),
    ...usageSeries(await store.usage(), per_job),
  );
  return lines.join('\n') + '\n';
}

/**
 * Recorded device time (ended attempts), jobs removed by retention included (Store.usage): the
 * total, and per user only with `per_user` (it names users).
 */
function usageSeries(usage: readonly UserUsage[], per_user: boolean): string[] {
  const total = usage.reduce((n, u) => n + u.gpu_s, 0);
  return [
    '# HELP goodput_gpu_seconds_total Device-seconds of ended attempts of every job, removed ones included.',
    '# TYPE goodput_gpu_seconds_total counter',
    `goodput_gpu_seconds_total ${total}`,
    ...(per_user
      ? [
          '# HELP goodput_user_gpu_seconds_total Device-seconds of ended attempts per user, removed jobs included.',
          '# TYPE goodput_user_gpu_seconds_total counter',
          ...usage.map((u) => `goodput_user_gpu_seconds_total{user="${label(u.user)}"} ${u.gpu_s}`),
          '# HELP goodput_user_jobs_total Jobs submitted per user, removed ones included.',
          '# TYPE goodput_user_jobs_total counter',
          ...usage.map((u) => `goodput_user_jobs_total{user="${label(u.user)}"} ${u.jobs}`),
        ]
      : []),
  ];
}
