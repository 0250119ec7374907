/** `goodput show` and `goodput ls` in plain words: batch, efficiency, goodput, speedup, reasons. Pure. */
import type { EventView, JobDetail, JobSummary } from '../client/client.js';
import type { RanksView } from '../api/rank-views.js';
import { age, formatTable } from '../client/table.js';
import type { BatchView, JobInsight } from '../control/loop/insight.js';
import { LR_RULE_WORDS } from '../core/lr-rule.js';
import { liveDoctorLine, type LiveReport } from '../doctor/live.js';
import { terminalText } from '../util/printable.js';
import { profileLine } from './profile-render.js';

const num = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(3));
const times = (x: number) => `x${x.toFixed(x >= 10 ? 0 : 2)}`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "192 = 64 local x 1 accumulation step x 3 replicas". */
export function batchWords(b: BatchView): string {
  return `${b.total} = ${b.local_bsz} local x ${plural(b.accum_steps + 1, 'accumulation step')} x ${plural(b.replicas, 'replica')}`;
}

/** "learning rate x5.66 (square root of AdaScale, for Adam)": the rule the job's decision named, else AdaScale. */
const lrWords = (scale: number, rule: JobInsight['lr_rule']): string =>
  `learning rate x${scale.toFixed(2)} (${LR_RULE_WORDS[rule ?? 'adascale']})`;

/** The insight lines of `goodput show` (none while nothing is known). */
export function insightLines(i: JobInsight): string[] {
  const lines: string[] = [];
  if (i.batch)
    lines.push(`batch      ${batchWords(i.batch)}${i.lr_scale !== null ? `; ${lrWords(i.lr_scale, i.lr_rule)}` : ''}`);
  if (i.throughput_samples_s !== null) {
    const eff =
      i.efficiency !== null && i.goodput !== null
        ? ` x statistical efficiency ${i.efficiency.toFixed(2)} = goodput ${num(i.goodput)} (initial-batch samples/s)`
        : ' (no gradient statistics yet: goodput unknown)';
    lines.push(`goodput    throughput ${num(i.throughput_samples_s)} samples/s${eff}`);
  }
  if (i.predicted) {
    const now = i.speedup !== null ? `${times(i.speedup)} now over 1 replica, ` : '';
    lines.push(
      `speedup    predicted ${now}best ${times(i.predicted.speedup)} on ${plural(i.predicted.replicas, 'replica')} (batch ${i.predicted.batch_size})`,
    );
  } else {
    lines.push(
      'speedup    not predicted yet (no throughput model: the job has not reported step times and gradient statistics)',
    );
  }
  return lines;
}

/** The verdicts across ranks (none when no rank reports summaries). */
export function rankLines(ranks: RanksView | undefined): string[] {
  if (!ranks || ranks.ranks.length === 0) return [];
  const out: string[] = [];
  if (ranks.straggler) out.push(`straggler  ${ranks.straggler.line}`);
  if (ranks.hang) out.push(`hung rank  ${ranks.hang.line}`);
  if (out.length === 0) out.push(`ranks      ${plural(ranks.ranks.length, 'rank')} report; no straggler, no hung rank`);
  return out;
}

/** The most recent events `goodput show` prints (--json has every one). */
const SHOWN_EVENTS = 15;

/** Full text of `goodput show` (the job, its current replicas and its latest events; the doctor's verdict from its reports). */
export function renderJob(
  job: JobDetail,
  events: readonly EventView[],
  reports: readonly LiveReport[] = [],
  ranks?: RanksView,
): string {
  const unit = job.device_kind === 'gpu' ? 'GPU' : 'CPU slot';
  const envs = [
    job.spec.venv && `venv ${job.spec.venv}`,
    job.spec.conda && `conda ${job.spec.conda}`,
    job.spec.env_setup && 'env_setup',
  ].filter(Boolean);
  const lines = [
    `job        ${job.id} (${job.name}) of ${job.user}`,
    `state      ${job.state}: ${job.reason}`,
    `command    ${JSON.stringify(job.spec.command)} in ${job.spec.workdir}${envs.length ? ` (${envs.join(', ')})` : ''}`,
    `replicas   ${job.replicas} (min ${job.spec.min_replicas}, max ${job.spec.max_replicas}) ` +
      `on ${unit}(s) ${job.devices.join(',') || '-'}` +
      `${job.gpu_type !== null && job.device_kind === 'gpu' ? ` of type ${job.gpu_type}` : ''}`,
    ...insightLines(job.insight),
    profileLine(job, events),
    `doctor     ${liveDoctorLine(reports, job)}`,
    ...rankLines(ranks),
    `restarts   ${job.restarts} (failures ${job.failures} of max ${job.spec.max_restarts})`,
    `progress   step ${job.step}, ${job.samples} samples, ${num(job.attained_service_gpu_s)} ${job.device_kind === 'gpu' ? 'GPU-s' : 'slot-s'} used`,
    `times      submitted ${job.submitted_at}, started ${job.started_at ?? '-'}, finished ${job.finished_at ?? '-'}`,
  ];
  if (job.rejection) lines.push(`waiting    ${job.rejection.code}: ${job.rejection.message}`);
  if (job.launch_wait) lines.push(`launch     waits: ${job.launch_wait}`);
  if (job.health) lines.push(`health     ${job.health}`);
  if (job.kept) lines.push(`kept       ${job.kept}`);
  if (job.checkpoint_at) lines.push(`checkpoint ${job.checkpoint_at}`);
  // Reasons, names, paths and the command come from users and jobs: each line is escaped whole.
  const out = [lines.map((l) => terminalText(l)).join('\n')];
  if (job.current_replicas.length > 0) {
    out.push(
      formatTable(
        ['attempt', 'rank', 'node', unit === 'GPU' ? 'gpu' : 'slot', 'pid/job', 'exit'],
        job.current_replicas.map((r) => [
          String(r.attempt),
          String(r.rank),
          r.node,
          String(r.device ?? '-'),
          r.launch_id ? `slurm ${r.launch_id}` : String(r.pid),
          r.exit_code === null ? 'running' : String(r.exit_code),
        ]),
      ),
    );
  }
  const tail =
    job.state === 'failed'
      ? [...events].reverse().find((e) => typeof e.data.log_tail === 'string' && e.data.log_tail !== '')
      : undefined;
  // The log tail is the job's own output: it may hold escape sequences aimed at whoever runs `show`.
  if (tail)
    out.push(
      `last lines of replica ${terminalText(String(tail.data.log_rank ?? 0))}'s log:\n` +
        `${terminalText(String(tail.data.log_tail), true).replace(/^/gm, '  ')}`,
    );
  out.push(
    formatTable(
      ['time', 'actor', 'event', 'state', 'reason'],
      events
        .slice(-SHOWN_EVENTS)
        .map((e) => [e.at.slice(11, 19), e.actor, e.kind, `${e.from_state ?? ''}->${e.to_state ?? ''}`, e.reason]),
    ),
  );
  if (events.length > SHOWN_EVENTS)
    out.push(
      `(${events.length - SHOWN_EVENTS} earlier events not shown; 'goodput show ${job.name} --json' has them all)`,
    );
  return out.join('\n\n');
}

/** What a user should notice about a job in `goodput ls`: why it failed, or that it was found hung. */
function note(j: JobSummary): string {
  const text = j.state === 'failed' ? j.reason : (j.health ?? '');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `goodput ls` as a table (or a line saying there are none). */
export function renderJobList(jobs: readonly JobSummary[], now_ms = Date.now()): string {
  if (jobs.length === 0)
    return "no jobs yet; submit one with 'goodput submit [options] -- <command>' (see 'goodput submit --help')";
  const rows = jobs.map((j) => {
    const i = j.insight;
    const batch = i.batch
      ? `${i.batch.total} (${i.batch.local_bsz}x${i.batch.accum_steps + 1}x${i.batch.replicas})`
      : '-';
    const speedup = i.predicted
      ? `${i.speedup !== null ? times(i.speedup) : '?'} (best ${times(i.predicted.speedup)} on ${i.predicted.replicas})`
      : '-';
    return [
      j.id,
      j.name,
      j.user,
      j.state,
      String(j.replicas),
      String(j.restarts),
      batch,
      i.goodput !== null ? `${num(i.goodput)}/s` : '-',
      speedup,
      String(j.step),
      age(j.submitted_at, now_ms),
      note(j),
    ];
  });
  return formatTable(
    ['id', 'name', 'user', 'state', 'replicas', 'restarts', 'batch', 'goodput', 'speedup', 'step', 'submitted', 'note'],
    rows,
  );
}
