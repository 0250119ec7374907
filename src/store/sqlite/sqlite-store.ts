import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';
import type { PerfParams } from '../../goodput/types.js';
import { refusal, serviceSince, STOP_EVENT, type EventKind, type Operation, type StopKind } from '../lifecycle.js';
import type {
  CancelledJob,
  CancelQuery,
  JobPage,
  JobPageQuery,
  JobQuery,
  UserUsage,
  KeyProfileUpdate,
  NewJob,
  NewReplica,
  DeviceBinding,
  ReportBatch,
  RefitCommit,
  ReportsAdded,
  Store,
  TransitionDetail,
} from '../store.js';
import type {
  JobEvent,
  JobRecord,
  JobState,
  Measurement,
  ProfileRow,
  ProfileUse,
  ReplicaRecord,
  ReportRecord,
  StoredKeyProfile,
  TokenRecord,
} from '../types.js';
import { advanceMark, readHighWater } from './durability.js';
import { startCheckpointer } from './checkpointer.js';
import { SqliteKeyProfiles } from './key-profiles.js';
import { countByState, jobPage, listJobs } from './job-page.js';
import { cancelMatching, checkUserLimits, removeEnded, usageByUser } from './history.js';
import { addReportBatch, reportStatements } from './report-tx.js';
import { migrate } from './migrations.js';
import { eventCrc, toEvent, toJob, toReplica, type Row } from './rows.js';
import * as tokens from './tokens.js';

/** Options of the SQLite store. */
export interface SqliteStoreOptions {
  /** Clock in epoch milliseconds (injectable for tests). Default Date.now. */
  now_ms?: () => number;
  /**
   * Checkpoint the WAL from a worker thread every this many ms instead of inside commits
   * (keeps fsync off the event loop). Default 1000; 0 = SQLite's automatic checkpoints.
   * Ignored for `:memory:`.
   */
  background_checkpoint_ms?: number;
  /**
   * Keep the high-water mark (durability.ts) in this file after every write that adds events.
   * Default: none (tests, `:memory:`); the server uses `<db>.seq`.
   */
  high_water_file?: string;
  /** WAL size past which the checkpoint worker truncates it. Default WAL_LIMIT_BYTES / 4. */
  wal_truncate_bytes?: number;
}

/** Largest WAL kept between checkpoints (bytes); the checkpoint worker truncates past a quarter of it. */
export const WAL_LIMIT_BYTES = 64 << 20;

/**
 * The embedded store: one SQLite file (WAL mode, synchronous=NORMAL: a committed transaction
 * survives a process crash, and an OS crash loses at most the last few). Every transaction is
 * BEGIN IMMEDIATE: it waits (busy_timeout) for the checkpoint worker's truncating checkpoint
 * instead of failing with SQLITE_BUSY when a deferred read would upgrade to a write. Methods run
 * synchronously inside better-sqlite3 transactions, so each named operation is atomic.
 * Use `:memory:` for an in-memory database.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly now_ms: () => number;
  private readonly stmts: Record<'getJob' | 'jobState' | 'event', Database.Statement>;
  private checkpointer: Worker | undefined;
  private readonly reportTx: Database.Transaction<
    (batches: readonly ReportBatch[], now: number) => (ReportsAdded | GoodputError)[]
  >;
  private readonly highWater: { file: string; value: number } | undefined;
  private readonly keyProfiles: SqliteKeyProfiles;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.now_ms = options.now_ms ?? Date.now;
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    migrate(this.db);
    const every_ms = options.background_checkpoint_ms ?? 1000;
    if (path !== ':memory:' && every_ms > 0)
      this.checkpointer = startCheckpointer(this.db, path, every_ms, options.wal_truncate_bytes ?? WAL_LIMIT_BYTES / 4);
    if (options.high_water_file !== undefined)
      this.highWater = { file: options.high_water_file, value: readHighWater(options.high_water_file) ?? 0 };
    this.stmts = {
      getJob: this.db.prepare('SELECT * FROM jobs WHERE id = ?'),
      jobState: this.db.prepare('SELECT state FROM jobs WHERE id = ?').pluck(),
      event: this.db.prepare(
        'INSERT INTO events (job_id, at_ms, actor, kind, from_state, to_state, reason, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
    };
    this.keyProfiles = new SqliteKeyProfiles(this.db, this.now_ms);
    const reports = reportStatements(this.db);
    this.reportTx = this.db.transaction((batches: readonly ReportBatch[], now: number) =>
      batches.map((b) => addReportBatch(reports, b, now)),
    );
  }

  async probe(write = false): Promise<void> {
    this.db.prepare('SELECT count(*) FROM jobs').get();
    // Setting the schema version to itself commits one page (the header) and changes nothing:
    // the smallest write that meets an immutable or read-only file, or a failing disk.
    if (write) this.db.pragma(`user_version = ${this.schemaVersion()}`);
  }

  /** Schema version of the open database (number of applied migrations). */
  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  async createJob(job: NewJob, actor: string): Promise<JobRecord> {
    const now = this.now_ms();
    const existing = this.db
      .transaction(() => {
        const earlier = job.idempotency_key === undefined ? undefined : this.submitKey(job.user, job.idempotency_key);
        if (earlier !== undefined) return earlier;
        if (this.stmts.getJob.get(job.id)) throw new GoodputError('E_CONFLICT', `job ${job.id} already exists`);
        if (job.limits !== undefined) checkUserLimits(this.db, job.user, job.limits);
        if (job.idempotency_key !== undefined)
          this.db
            .prepare('INSERT INTO submit_keys (user, key, job_id, created_at_ms) VALUES (?, ?, ?, ?)')
            .run(job.user, job.idempotency_key, job.id, now);
        this.db
          .prepare(
            'INSERT INTO jobs (id, name, user, spec, state, submitted_at_ms, reason) VALUES (?, ?, ?, ?, ?, ?, ?)',
          )
          .run(job.id, job.name, job.user, JSON.stringify(job.spec), 'queued', now, 'submitted');
        this.event(job.id, now, actor, 'submitted', null, 'queued', 'submitted', JSON.stringify({ spec: job.spec }));
        return undefined;
      })
      .immediate();
    if (existing !== undefined) return this.mustGet(existing);
    this.advanceHighWater();
    return this.mustGet(job.id);
  }

  async jobForSubmitKey(user: string, key: string): Promise<JobRecord | undefined> {
    const id = this.submitKey(user, key);
    return id === undefined ? undefined : this.getJob(id);
  }

  private submitKey(user: string, key: string): string | undefined {
    return this.db.prepare('SELECT job_id FROM submit_keys WHERE user = ? AND key = ?').pluck().get(user, key) as
      string | undefined;
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const row = this.stmts.getJob.get(id) as Row | undefined;
    return row ? toJob(row) : undefined;
  }

  async getJobState(id: string): Promise<JobState | undefined> {
    return this.stmts.jobState.get(id) as JobState | undefined;
  }

  async listJobs(query: JobQuery = {}): Promise<JobRecord[]> {
    return listJobs(this.db, query);
  }
  async listJobsPage(query: JobPageQuery): Promise<JobPage> {
    return jobPage(this.db, query);
  }
  async countJobsByState(): Promise<Map<JobState, number>> {
    return countByState(this.db);
  }
  async cancelJobs(query: CancelQuery, actor: string, reason: string): Promise<CancelledJob[]> {
    const done = this.db.transaction(() => cancelMatching(this.db, query, this.now_ms(), actor, reason)).immediate();
    return done.length > 0 && this.advanceHighWater() ? done : [];
  }
  async deleteEndedJobs(before_ms: number, limit: number): Promise<string[]> {
    return this.db.transaction(() => removeEnded(this.db, before_ms, limit)).immediate();
  }
  async usage(): Promise<UserUsage[]> {
    return usageByUser(this.db);
  }

  async assignJob(
    id: string,
    binding: DeviceBinding,
    not_before_ms: number,
    actor: string,
    reason: string,
  ): Promise<JobRecord> {
    return this.transition(
      id,
      'assign',
      'starting',
      actor,
      'assigned',
      reason,
      () => ({
        allocation: JSON.stringify(binding.allocation),
        devices: JSON.stringify(binding.devices),
        not_before_ms,
      }),
      { binding },
    );
  }

  async retargetJob(id: string, binding: DeviceBinding, actor: string, reason: string): Promise<JobRecord> {
    return this.transition(
      id,
      'retarget',
      null,
      actor,
      'retargeted',
      reason,
      () => ({
        allocation: JSON.stringify(binding.allocation),
        devices: JSON.stringify(binding.devices),
      }),
      { binding },
    );
  }

  async launchJob(id: string, replicas: readonly NewReplica[], actor: string, reason: string): Promise<JobRecord> {
    const now = this.now_ms();
    return this.transition(
      id,
      'launch',
      'running',
      actor,
      'launched',
      reason,
      (job) => {
        const insert = this.db.prepare(
          'INSERT OR REPLACE INTO replicas (job_id, attempt, rank, device, node, launch_id, pid, ' +
            'proc_start, log_path, started_at_ms, gpu_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        );
        for (const r of replicas)
          insert.run(
            id,
            job.launches,
            r.rank,
            r.device,
            r.node,
            r.launch_id,
            r.pid,
            r.proc_start,
            r.log_path,
            r.started_at_ms,
            r.gpu_type ?? '',
          );
        return {
          launches: job.launches + 1,
          launched_at_ms: now,
          started_at_ms: job.started_at_ms ?? now,
          stop_requested_at_ms: null,
        };
      },
      (job) => ({
        attempt: job.launches,
        replicas: replicas.map((r) => ({
          rank: r.rank,
          node: r.node,
          device: r.device,
          pid: r.pid,
          ...(r.launch_id ? { launch_id: r.launch_id } : {}),
        })),
      }),
    );
  }

  async stopJob(
    id: string,
    binding: DeviceBinding,
    kind: StopKind,
    actor: string,
    reason: string,
    detail: TransitionDetail = {},
  ): Promise<JobRecord> {
    const now = this.now_ms();
    return this.transition(
      id,
      'stop',
      'rescaling',
      actor,
      STOP_EVENT[kind],
      reason,
      (job) => ({
        allocation: JSON.stringify(binding.allocation),
        devices: JSON.stringify(binding.devices),
        stop_requested_at_ms: now,
        stop_kind: kind,
        failures: job.failures + (kind === 'rescale' ? 0 : 1),
        attained_service_gpu_s: job.attained_service_gpu_s + serviceSince(job, now),
        launched_at_ms: null,
        ...(detail.failure ? { last_failure: JSON.stringify(detail.failure) } : {}),
        ...(kind === 'hung' ? { health: reason } : {}),
      }),
      {
        binding,
        failure: kind !== 'rescale',
        ...detail.data,
        ...(detail.failure ? { last_failure: detail.failure } : {}),
      },
    );
  }

  async relaunchJob(id: string, not_before_ms: number, actor: string, reason: string): Promise<JobRecord> {
    return this.transition(
      id,
      'relaunch',
      'starting',
      actor,
      'relaunch',
      reason,
      () => ({ not_before_ms, stop_requested_at_ms: null, stop_kind: null }),
      { not_before_ms },
    );
  }

  async requeueJob(id: string, actor: string, reason: string): Promise<JobRecord> {
    const job = await this.mustGet(id);
    const to: JobState = job.launches === 0 ? 'queued' : 'preempted';
    return this.transition(id, 'requeue', to, actor, 'requeued', reason, () => ({
      allocation: '[]',
      devices: '[]',
      stop_requested_at_ms: null,
      stop_kind: null,
    }));
  }

  async finishJob(
    id: string,
    to: 'succeeded' | 'failed' | 'cancelled',
    actor: string,
    reason: string,
    detail: TransitionDetail = {},
  ): Promise<JobRecord> {
    const now = this.now_ms();
    return this.transition(
      id,
      'finish',
      to,
      actor,
      to,
      reason,
      (job) => ({
        allocation: '[]',
        devices: '[]',
        finished_at_ms: now,
        attained_service_gpu_s: job.attained_service_gpu_s + serviceSince(job, now),
        launched_at_ms: null,
        stop_kind: null,
        ...(detail.failure ? { last_failure: JSON.stringify(detail.failure), failures: job.failures + 1 } : {}),
      }),
      { ...detail.data, ...(detail.failure ? { last_failure: detail.failure } : {}) },
    );
  }

  async listReplicas(job_id: string, attempt?: number): Promise<ReplicaRecord[]> {
    const rows =
      attempt === undefined
        ? this.db.prepare('SELECT * FROM replicas WHERE job_id = ? ORDER BY attempt, rank').all(job_id)
        : this.db.prepare('SELECT * FROM replicas WHERE job_id = ? AND attempt = ? ORDER BY rank').all(job_id, attempt);
    return (rows as Row[]).map(toReplica);
  }

  async listLiveReplicas(): Promise<ReplicaRecord[]> {
    return (
      this.db.prepare('SELECT * FROM replicas WHERE exit_code IS NULL ORDER BY job_id, attempt, rank').all() as Row[]
    ).map(toReplica);
  }

  async recordReplicaExit(
    job_id: string,
    attempt: number,
    rank: number,
    exit_code: number,
    actor: string,
    detail?: string,
  ): Promise<boolean> {
    const now = this.now_ms();
    return (
      this.db
        .transaction(() => {
          const changed = this.db
            .prepare(
              'UPDATE replicas SET exit_code = ?, exited_at_ms = ? WHERE job_id = ? AND attempt = ? AND rank = ? AND exit_code IS NULL',
            )
            .run(exit_code, now, job_id, attempt, rank).changes;
          if (changed === 0) return false;
          const state = (this.stmts.getJob.get(job_id) as Row | undefined)?.state as JobState | undefined;
          this.event(
            job_id,
            now,
            actor,
            'replica-exited',
            state ?? null,
            state ?? null,
            `replica ${rank} of attempt ${attempt} exited with ${exit_code}${detail ? ` (${detail})` : ''}`,
            JSON.stringify({ attempt, rank, exit_code }),
          );
          return true;
        })
        .immediate() && this.advanceHighWater()
    );
  }

  async addReports(batch: ReportBatch): Promise<ReportsAdded> {
    const [result] = this.reportTx.immediate([batch], this.now_ms());
    if (result instanceof GoodputError) throw result;
    return result!;
  }

  async addReportBatches(batches: readonly ReportBatch[]): Promise<(ReportsAdded | GoodputError)[]> {
    return this.reportTx.immediate(batches, this.now_ms());
  }

  async listReports(job_id: string, limit = 1000): Promise<ReportRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM (SELECT * FROM reports WHERE job_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id')
      .all(job_id, limit) as Row[];
    return rows.map((r) => ({
      ...(JSON.parse(r.body as string) as Measurement),
      job_id,
      attempt: r.attempt as number,
      received_at_ms: r.received_at_ms as number,
    }));
  }

  async getProfile(job_id: string, gpu_type?: string): Promise<ProfileRow[]> {
    const rows = (
      gpu_type === undefined
        ? this.db
            .prepare('SELECT * FROM profiles WHERE job_id = ? ORDER BY num_nodes, num_replicas, local_bsz, gpu_type')
            .all(job_id)
        : this.db
            .prepare(
              "SELECT * FROM profiles WHERE job_id = ? AND gpu_type IN (?, '') ORDER BY num_nodes, num_replicas, local_bsz, gpu_type",
            )
            .all(job_id, gpu_type)
    ) as Row[];
    return rows.map((r) => {
      const count = r.count as number;
      return {
        gpu_type: r.gpu_type as string,
        num_nodes: r.num_nodes as number,
        num_replicas: r.num_replicas as number,
        local_bsz: r.local_bsz as number,
        count,
        accum_step_time_s: (r.sum_accum_step_time_s as number) / count,
        optim_step_time_s: (r.sum_optim_step_time_s as number) / count,
      };
    });
  }

  async saveRefit(refit: RefitCommit): Promise<StoredKeyProfile | undefined> {
    const now = this.now_ms();
    let evented = false;
    const profile = this.db
      .transaction(() => {
        const row = this.stmts.getJob.get(refit.job_id) as Row | undefined;
        if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${refit.job_id}`);
        const state = row.state as string;
        this.db
          .prepare('UPDATE jobs SET perf = ?, correction = ? WHERE id = ?')
          .run(JSON.stringify(refit.perf), refit.correction ? JSON.stringify(refit.correction) : null, refit.job_id);
        if (refit.discard && row.profile_use !== 'discarded') {
          this.db.prepare('UPDATE jobs SET profile_use = ? WHERE id = ?').run('discarded', refit.job_id);
          this.event(
            refit.job_id,
            now,
            'scheduler',
            'profile-discarded',
            state,
            state,
            refit.discard.reason,
            JSON.stringify(refit.discard.data),
          );
          evented = true;
        }
        if (!refit.profile) return undefined;
        const { update, perf, replaced } = refit.profile;
        if (replaced) {
          this.keyProfiles.removeIn(update.key, update.gpu_type);
          this.event(
            refit.job_id,
            now,
            'scheduler',
            'profile-replaced',
            state,
            state,
            replaced.reason,
            JSON.stringify(replaced.data),
          );
          evented = true;
        }
        this.keyProfiles.mergeIn(update);
        this.keyProfiles.savePerf(update.key, update.gpu_type, perf);
        return this.keyProfiles.get(update.key, update.gpu_type);
      })
      .immediate();
    if (evented) this.advanceHighWater();
    return profile;
  }

  async recordEvent(
    job_id: string,
    kind: EventKind,
    actor: string,
    reason: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    const now = this.now_ms();
    this.db
      .transaction(() => {
        const state = (this.stmts.getJob.get(job_id) as Row | undefined)?.state as JobState | undefined;
        if (state === undefined) throw new GoodputError('E_NOT_FOUND', `no job ${job_id}`);
        this.event(job_id, now, actor, kind, state, state, reason, JSON.stringify(data));
      })
      .immediate();
  }

  async listEvents(job_id: string): Promise<JobEvent[]> {
    const rows = this.db.prepare('SELECT * FROM events WHERE job_id = ? ORDER BY id').all(job_id) as Row[];
    return rows.map(toEvent);
  }

  async putToken(token: TokenRecord): Promise<void> {
    tokens.put(this.db, token);
  }
  async findToken(hash: string): Promise<TokenRecord | undefined> {
    return tokens.find(this.db, hash);
  }
  async listTokens(user?: string): Promise<TokenRecord[]> {
    return tokens.list(this.db, user);
  }
  async revokeToken(hash: string, at_ms: number): Promise<boolean> {
    return tokens.revoke(this.db, hash, at_ms);
  }
  async setUnixUser(user: string, unix_user: string): Promise<void> {
    tokens.setUnixUser(this.db, user, unix_user);
  }
  async getUnixUser(user: string): Promise<string | undefined> {
    return tokens.getUnixUser(this.db, user);
  }

  async mergeKeyProfile(update: KeyProfileUpdate): Promise<StoredKeyProfile> {
    return this.keyProfiles.merge(update);
  }
  async saveKeyProfilePerf(key: string, gpu_type: string, perf: PerfParams): Promise<boolean> {
    return this.keyProfiles.savePerf(key, gpu_type, perf);
  }
  async getKeyProfile(key: string, gpu_type: string): Promise<StoredKeyProfile | undefined> {
    return this.keyProfiles.get(key, gpu_type);
  }
  async listKeyProfiles(key?: string): Promise<StoredKeyProfile[]> {
    return this.keyProfiles.list(key);
  }
  async deleteKeyProfile(key: string, gpu_type: string): Promise<boolean> {
    return this.keyProfiles.remove(key, gpu_type);
  }

  async setProfileUse(
    job_id: string,
    use: ProfileUse,
    actor: string,
    reason: string,
    data: Record<string, unknown>,
  ): Promise<boolean> {
    const now = this.now_ms();
    return (
      this.db
        .transaction(() => {
          const row = this.stmts.getJob.get(job_id) as Row | undefined;
          if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${job_id}`);
          if (row.profile_use === use || row.profile_use === 'discarded') return false;
          this.db.prepare('UPDATE jobs SET profile_use = ? WHERE id = ?').run(use, job_id);
          this.event(
            job_id,
            now,
            actor,
            use === 'used' ? 'profile-used' : 'profile-discarded',
            row.state as string,
            row.state as string,
            reason,
            JSON.stringify(data),
          );
          return true;
        })
        .immediate() && this.advanceHighWater()
    );
  }

  /** Closes the database (and the checkpoint worker). Idempotent. */
  async close(): Promise<void> {
    const worker = this.checkpointer;
    this.checkpointer = undefined;
    if (worker) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.ref(); // keep the loop alive until the worker has closed its connection
      worker.postMessage('stop');
      await exited;
    }
    if (this.db.open) this.db.close();
  }

  /** Appends an event with the checksum of its text (rows.ts `eventCrc`, checked when read). */
  private event(
    job_id: string,
    at_ms: number,
    actor: string,
    kind: string,
    from: string | null,
    to: string | null,
    reason: string,
    data: string,
  ): void {
    this.stmts.event.run(job_id, at_ms, actor, kind, from, to, reason, data, eventCrc(actor, kind, reason, data));
  }

  /** Moves the high-water mark to the newest event just committed (durability.ts `advanceMark`). Returns true (for chaining). */
  private advanceHighWater(): true {
    if (this.highWater) advanceMark(this.db, this.highWater);
    return true;
  }

  private async mustGet(id: string): Promise<JobRecord> {
    const job = await this.getJob(id);
    if (!job) throw new GoodputError('E_NOT_FOUND', `no job ${id}`);
    return job;
  }

  /**
   * The one way a job row changes state: checks that `op` may run in the job's state
   * (lifecycle.ts), applies `patch` (column -> value), writes the event, all in one transaction.
   * `to = null` keeps the state.
   */
  private transition(
    id: string,
    op: Operation,
    to: JobState | null,
    actor: string,
    kind: EventKind,
    reason: string,
    patch: (job: JobRecord) => Record<string, string | number | null>,
    data: Record<string, unknown> | ((job: JobRecord) => Record<string, unknown>) = {},
  ): Promise<JobRecord> {
    const now = this.now_ms();
    this.db
      .transaction(() => {
        const row = this.stmts.getJob.get(id) as Row | undefined;
        if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${id}`);
        const job = toJob(row);
        const refused = refusal(op, job.state);
        if (refused !== undefined)
          throw new GoodputError('E_CONFLICT', `job ${id} is ${job.state}; cannot ${op} (${refused})`);
        const values = { ...patch(job), state: to ?? job.state, reason };
        const columns = Object.keys(values);
        this.db
          .prepare(`UPDATE jobs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`)
          .run(...Object.values(values), id);
        const payload = typeof data === 'function' ? data(job) : data;
        this.event(id, now, actor, kind, job.state, to ?? job.state, reason, JSON.stringify(payload));
      })
      .immediate();
    this.advanceHighWater();
    return this.mustGet(id);
  }
}
