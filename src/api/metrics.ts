/** Prometheus text exposition of the control plane's state (format 0.0.4). */
import type { Controller } from '../control/controller.js';
import type { Store } from '../store/store.js';
import { ACTIVE_STATES, TERMINAL_STATES } from '../store/types.js';

/** Renders /metrics: jobs by state, devices total/allocated, reports, scheduling rounds. */
export async function metricsText(store: Store, controller: Controller): Promise<string> {
  const jobs = await store.listJobs();
  const lines: string[] = ['# HELP goodput_jobs Jobs by state.', '# TYPE goodput_jobs gauge'];
  for (const state of [...ACTIVE_STATES, ...TERMINAL_STATES]) {
    lines.push(`goodput_jobs{state="${state}"} ${jobs.filter((j) => j.state === state).length}`);
  }
  const allocated = jobs.filter((j) => j.state === 'running' || j.state === 'rescaling' || j.state === 'starting').reduce((n, j) => n + j.devices.length, 0);
  const s = controller.stats;
  lines.push(
    '# HELP goodput_gpus_total Devices (GPUs or CPU slots) managed by this server.',
    '# TYPE goodput_gpus_total gauge',
    `goodput_gpus_total ${controller.inventory().reduce((n, node) => n + node.devices.length, 0)}`,
    '# HELP goodput_gpus_allocated Devices allocated to jobs (running, starting or rescaling).',
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
  );
  return lines.join('\n') + '\n';
}
