/** The report transaction of the SQLite store: a batch of measurements checked against its job and stored. */
import type Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';
import { attemptShape, reportIssues } from '../../core/report-issues.js';
import { isTerminal } from '../lifecycle.js';
import type { ReportBatch, ReportsAdded } from '../store.js';
import { toJob, type Row } from './rows.js';

/** The prepared statements of the report path. */
export type ReportStatements = Record<
  'getJob' | 'attemptNodes' | 'report' | 'profile' | 'jobProgress',
  Database.Statement
>;

/** Prepares the report path's statements once per connection. */
export function reportStatements(db: Database.Database): ReportStatements {
  return {
    getJob: db.prepare('SELECT * FROM jobs WHERE id = ?'),
    attemptNodes: db.prepare('SELECT node, gpu_type FROM replicas WHERE job_id = ? AND attempt = ? ORDER BY rank'),
    report: db.prepare('INSERT INTO reports (job_id, attempt, received_at_ms, step, body) VALUES (?, ?, ?, ?, ?)'),
    profile:
      db.prepare(`INSERT INTO profiles (job_id, gpu_type, num_nodes, num_replicas, local_bsz, count, sum_accum_step_time_s, sum_optim_step_time_s)
      VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT DO UPDATE SET count = count + 1,
      sum_accum_step_time_s = sum_accum_step_time_s + excluded.sum_accum_step_time_s,
      sum_optim_step_time_s = sum_optim_step_time_s + excluded.sum_optim_step_time_s RETURNING count`),
    jobProgress: db.prepare(
      'UPDATE jobs SET step = ?, samples = ?, remaining_samples = ?, model_parameters = ?, grad ' +
        '= ?, limits = ?, last_report_at_ms = ?, last_step_time_s = ?, max_profiled_replicas = ?, ' +
        'checkpoint_at_ms = ?, checkpoint_on_stop = ? WHERE id = ?',
    ),
  };
}

/**
 * The hot path of the report endpoint: per batch one read, inserts, one update. Runs inside the
 * caller's transaction; a refused batch is returned as its error, nothing of it written.
 */
export function addReportBatch(stmts: ReportStatements, b: ReportBatch, now: number): ReportsAdded | GoodputError {
  const row = stmts.getJob.get(b.job_id) as Row | undefined;
  if (!row) return new GoodputError('E_NOT_FOUND', `no job ${b.job_id}`);
  const job = toJob(row);
  if (isTerminal(job.state))
    return new GoodputError('E_CONFLICT', `job ${b.job_id} is ${job.state}; its reports are no longer accepted`);
  // The one check of a report against its job (an attempt never launched, values out of its
  // bounds), here because only the transaction sees the job as the batch will change it.
  // Only measurements of the shape the attempt was launched with (its recorded replicas) reach
  // the job's model and its key's profile.
  const replicas = stmts.attemptNodes.all(b.job_id, b.attempt) as { node: string; gpu_type: string }[];
  const shape = attemptShape(replicas);
  // The measurements are of the attempt's devices: their type, as recorded at launch ('' unknown).
  const gpu_type = replicas[0]?.gpu_type ?? '';
  const issues = reportIssues(b, job, shape);
  if (issues.length > 0) return new GoodputError('E_BAD_REQUEST', `report is invalid: ${issues.join('; ')}`);
  let fresh = false;
  b.reports.forEach((m, i) => {
    stmts.report.run(b.job_id, b.attempt, now, m.step, JSON.stringify(m));
    const p = b.profile[i]!;
    const counted = stmts.profile.get(
      b.job_id,
      gpu_type,
      p.num_nodes,
      p.num_replicas,
      p.local_bsz,
      p.accum_step_time_s,
      p.optim_step_time_s,
    ) as { count: number };
    if (counted.count === 1) fresh = true;
    job.step = m.step;
    job.last_step_time_s = m.step_time_s;
    if (m.samples !== undefined) job.samples = m.samples;
    // An entry that does not know it keeps the last known value (oldest first: newest wins).
    if (typeof m.remaining_samples === 'number') job.remaining_samples = m.remaining_samples;
    if (typeof m.model_parameters === 'number') job.model_parameters = m.model_parameters;
    if (typeof m.checkpoint_time_s === 'number' && Number.isFinite(m.checkpoint_time_s * 1000))
      job.checkpoint_at_ms = Math.round(m.checkpoint_time_s * 1000);
    job.max_profiled_replicas = Math.max(job.max_profiled_replicas, m.num_replicas);
    if (typeof m.grad_sqr === 'number' && typeof m.grad_var === 'number')
      job.grad = { sqr: m.grad_sqr, var: m.grad_var };
  });
  if (b.limits) job.limits = b.limits;
  if (b.checkpoint_on_stop !== undefined) job.checkpoint_on_stop = b.checkpoint_on_stop;
  job.last_report_at_ms = now;
  stmts.jobProgress.run(
    job.step,
    job.samples,
    job.remaining_samples,
    job.model_parameters,
    job.grad ? JSON.stringify(job.grad) : null,
    job.limits ? JSON.stringify(job.limits) : null,
    now,
    job.last_step_time_s,
    job.max_profiled_replicas,
    job.checkpoint_at_ms,
    job.checkpoint_on_stop ? 1 : 0,
    b.job_id,
  );
  return { job, new_configuration: fresh };
}
