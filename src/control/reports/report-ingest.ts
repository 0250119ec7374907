import { GoodputError } from '../../core/errors.js';
import { configKey } from '../../goodput/key-profile.js';
import { profilePoint } from '../../goodput/profile.js';
import type { ProfilePoint } from '../../goodput/types.js';
import type { ReportBatch, ReportsAdded, Store } from '../../store/store.js';
import type { JobRecord } from '../../store/types.js';
import type { JobConfig, LrRule } from './batch-config.js';
import { BatchDecisions } from './batch-decisions.js';
import type { NetworkBook } from './network-book.js';
import type { ProfileBook } from './profile-book.js';
import { refitJob, type RefitDeps } from './refit.js';

/** A report batch as the API hands it over; the profile points are computed here. */
export type ReportRequest = Omit<ReportBatch, 'profile'> & {
  /** The script's learning-rate rule, as the SDK reports it (core/wire.ts); absent: AdaScale. */
  lr_rule?: LrRule;
};

/** Options of the report path. */
export interface ReportIngestOptions {
  store: Store;
  /** Minimum time between refits of a job's throughput model (s). */
  refit_interval_s: number;
  now_ms: () => number;
  log: (line: string) => void;
  /** Asks for a scheduling round now: a measurement at a new size is evidence to act on. */
  request_round: () => void;
  /** Profiles of profile keys: each refit judges the job's points against its key's profile and merges them in. */
  profiles?: ProfileBook;
  /**
   * With `profiles`, the policy's network model (Policy.uses_network_model): a job with no
   * profile of other jobs, measured on one node only, gets its cross-node terms from it.
   */
  network?: NetworkBook;
  /**
   * The GPU type a job runs on (profile-book.ts `gpuTypeOf`, the type whose key profile its refit
   * merges into): its refit reads only its own measurements of that type. Absent: all of them
   * (one type).
   */
  gpu_type_of?: (job: JobRecord) => string;
}

/**
 * The report endpoint's work: group commit of measurements, refits of the throughput model and
 * the configuration answer. Reports posted in the same event-loop turn are stored in one
 * transaction; each request still answers only after its own measurements are committed.
 */
export class ReportIngest {
  /** Measurements stored so far (for /metrics). */
  reports_total = 0;
  private readonly lastFit = new Map<string, number>();
  private readonly refitsDue = new Set<string>();
  private readonly background = new Set<Promise<void>>();
  private readonly batchDecisions: BatchDecisions;
  private pending: { batch: ReportBatch; resolve: (r: ReportsAdded) => void; reject: (e: unknown) => void }[] = [];
  private stopped = false;
  private readonly refitDeps: RefitDeps;

  constructor(private readonly opts: ReportIngestOptions) {
    // A predicted batch gain must hold over three refits of the job's model to be acted on.
    this.batchDecisions = new BatchDecisions(3 * opts.refit_interval_s * 1000);
    this.refitDeps = {
      store: opts.store,
      log: opts.log,
      ...(opts.profiles ? { profiles: opts.profiles } : {}),
      ...(opts.network ? { network: opts.network } : {}),
    };
  }

  /**
   * Stores a job's measurements, refits its throughput model when it saw a new configuration
   * (or every refit interval), and returns the configuration it should use. E_CONFLICT when the
   * job has ended, E_BAD_REQUEST when the report does not fit the job (core/report-issues.ts;
   * nothing stored either way).
   */
  async report(request: ReportRequest): Promise<JobConfig> {
    const { job_id, reports, lr_rule, ...batch } = request;
    // The goodput model's maths (step time -> accumulation and optimizer time) stays out of the store.
    const { job, new_configuration } = await this.enqueue({
      ...batch,
      job_id,
      reports,
      profile: reports.map(profilePoint),
    });
    this.reports_total += reports.length;
    const now = this.opts.now_ms();
    const last = this.lastFit.get(job_id);
    if (new_configuration || last === undefined || now - last >= this.opts.refit_interval_s * 1000) {
      this.lastFit.set(job_id, now);
      // The first fit is awaited so the first answer already uses a model; later refits run
      // after this response, off the request's latency (the next report sees the new model).
      // A measurement at a new size is evidence the policy acts on at once, not a round later:
      // a job grows only once measured, and a growth that measured slower is undone quickly.
      if (!job.perf) {
        await this.refit(job);
        this.opts.request_round();
      } else if (!this.refitsDue.has(job_id)) {
        this.refitsDue.add(job_id);
        const later = new Promise<void>((done) => setImmediate(done))
          .then(async () => {
            this.refitsDue.delete(job_id);
            const fresh = this.stopped ? undefined : await this.opts.store.getJob(job_id);
            if (fresh) await this.refit(fresh);
            if (new_configuration) this.opts.request_round();
          })
          .catch((error: unknown) => this.opts.log(`refit of job ${job_id} failed: ${(error as Error).message}`));
        this.background.add(later);
        void later.finally(() => this.background.delete(later));
      }
    }
    const latest = reports[reports.length - 1]!;
    const { config, change } = this.batchDecisions.decide(
      job,
      request.attempt,
      latest,
      now,
      this.opts.profiles?.latestFor(job),
      lr_rule,
    );
    if (change) await this.opts.store.recordEvent(job_id, 'batch-size', 'scheduler', change.reason, change.data);
    return config;
  }

  /**
   * Refits a job whose replicas have all exited, before it is marked ended (`job` still holds its
   * placement, hence its GPU type), so that its key's profile gets the measurements it made since
   * its last refit: refits run at most every refit interval, and a short job's last seconds, or a
   * whole short run after a slow start, would otherwise never reach the profile. A job that
   * `succeeded` after discarding its key's profile replaces a profile no second job confirmed
   * (ProfileBook.plan).
   */
  async finalRefit(job: JobRecord, succeeded: boolean): Promise<void> {
    this.lastFit.delete(job.id);
    this.batchDecisions.forget(job.id);
    await this.refit(job, succeeded);
  }

  /** Stops background refits and waits for those under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.background]);
  }

  /** Refits the job's throughput model (refit.ts); a failure keeps the previous model. */
  private async refit(job: JobRecord, ended_successfully = false): Promise<void> {
    try {
      const gpu_type = this.opts.gpu_type_of?.(job);
      // An unplaced job's type by the cluster (ProfileBook's, where its refit would merge) need
      // not be the one it measured on: its measurements wait until it runs again.
      if (gpu_type !== undefined && job.allocation.length === 0) {
        const last = await lastAttemptType(this.opts.store, job);
        if (last !== undefined && last !== gpu_type) return;
      }
      const points = await ownProfilePoints(this.opts.store, job.id, gpu_type);
      await refitJob(this.refitDeps, job, points, ended_successfully);
    } catch (error) {
      this.opts.log(`refit of job ${job.id} failed: ${(error as Error).message}`);
    }
  }

  private enqueue(batch: ReportBatch): Promise<ReportsAdded> {
    return new Promise((resolve, reject) => {
      this.pending.push({ batch, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const items = this.pending;
    this.pending = [];
    try {
      const results = await this.opts.store.addReportBatches(items.map((i) => i.batch));
      results.forEach((r, k) => (r instanceof GoodputError ? items[k]!.reject(r) : items[k]!.resolve(r)));
    } catch (error) {
      for (const i of items) i.reject(error);
    }
  }
}

/**
 * A job's own profile points as the store keeps them: per configuration, the mean of its reports
 * there; with `gpu_type`, only those measured on that type (and those of unknown type, measured
 * before types were recorded). A configuration stored under several types is one point, their
 * mean weighted by count.
 */
export async function ownProfilePoints(store: Store, job_id: string, gpu_type?: string): Promise<ProfilePoint[]> {
  const byConfig = new Map<string, { point: ProfilePoint; count: number }>();
  for (const p of await store.getProfile(job_id, gpu_type)) {
    const key = configKey(p);
    const seen = byConfig.get(key);
    if (!seen) {
      byConfig.set(key, {
        count: p.count,
        point: {
          num_nodes: p.num_nodes,
          num_replicas: p.num_replicas,
          local_bsz: p.local_bsz,
          accum_step_time_s: p.accum_step_time_s,
          optim_step_time_s: p.optim_step_time_s,
        },
      });
      continue;
    }
    const total = seen.count + p.count;
    const mean = (a: number, b: number) => (a * seen.count + b * p.count) / total;
    seen.point = {
      ...seen.point,
      accum_step_time_s: mean(seen.point.accum_step_time_s, p.accum_step_time_s),
      optim_step_time_s: mean(seen.point.optim_step_time_s, p.optim_step_time_s),
    };
    seen.count = total;
  }
  return [...byConfig.values()].map((v) => v.point);
}

/** The GPU type of a job's newest attempt, as its replicas recorded it; undefined when it never launched or the type is unknown. */
export async function lastAttemptType(
  store: Store,
  job: Pick<JobRecord, 'id' | 'launches'>,
): Promise<string | undefined> {
  if (job.launches === 0) return undefined;
  return (await store.listReplicas(job.id, job.launches - 1))[0]?.gpu_type;
}

/**
 * The GPU type a job's own fit (`perf`) is of: `current` (the type it is placed on) when it has
 * measured there (or measured before types were recorded), else the type of its newest attempt
 * that measured anything, else `current`. Just after a move, before its first report on the new
 * type, its fit is still of the old one.
 */
export async function fitType(
  store: Store,
  job: Pick<JobRecord, 'id'>,
  current: string | undefined,
): Promise<string | undefined> {
  const measured = new Set((await store.getProfile(job.id)).map((r) => r.gpu_type));
  if (measured.size === 0 || measured.has('') || (current !== undefined && measured.has(current))) return current;
  const replicas = await store.listReplicas(job.id);
  for (let i = replicas.length - 1; i >= 0; i--) {
    const t = replicas[i]!.gpu_type;
    if (t !== undefined && measured.has(t)) return t;
  }
  return current;
}
