import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';
import type { ShareUsage } from '../../core/cluster.js';
import type { DeviceTime, PolicyMemoRecord } from '../store.js';
import type { PerfParams } from '../../goodput/types.js';
import type { EventKind, StopKind } from '../lifecycle.js';
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
  LiveReplicaPage,
  ProfileRow,
  ProfileUse,
  ReplicaExit,
  ReplicaRecord,
  ReplicaSpan,
  ReportRecord,
  StoredKeyProfile,
  TokenRecord,
} from '../types.js';
import { readHighWater } from './durability.js';
import { startCheckpointer } from './checkpointer.js';
import { SqliteKeyProfiles } from './key-profiles.js';
import { countByState, jobPage, listJobs } from './job-page.js';
import { cancelMatching, checkUserLimits, removeEnded, usageByUser } from './history.js';
import { addReportBatch, reportStatements } from './report-tx.js';
import { migrate } from './migrations.js';
import { toEvent, toJob, type Row } from './rows.js';
import * as transitions from './job-transitions.js';
import * as replicaQueries from './replica-queries.js';
import * as reportQueries from './report-queries.js';
import { saveRefit, setProfileUse } from './profile-writes.js';
import { storeCore, type StoreCore } from './store-core.js';
import * as tokens from './tokens.js';
import { cachePreparedStatements } from './statement-cache.js';

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
  private readonly core: StoreCore;
  private checkpointer: Worker | undefined;
  private readonly reportTx: Database.Transaction<
    (batches: readonly ReportBatch[], now: number) => (ReportsAdded | GoodputError)[]
  >;
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
    const highWater =
      options.high_water_file === undefined
        ? undefined
        : { file: options.high_water_file, value: readHighWater(options.high_water_file) ?? 0 };
    this.core = storeCore(this.db, this.now_ms, highWater);
    this.keyProfiles = new SqliteKeyProfiles(this.db, this.now_ms);
    const reports = reportStatements(this.db);
    this.reportTx = this.db.transaction((batches: readonly ReportBatch[], now: number) =>
      batches.map((b) => addReportBatch(reports, b, now)),
    );
    // After the statements kept above (some in pluck mode), so the cache never hands those out.
    cachePreparedStatements(this.db);
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
        if (this.core.jobRow(job.id)) throw new GoodputError('E_CONFLICT', `job ${job.id} already exists`);
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
        this.core.event(
          job.id,
          now,
          actor,
          'submitted',
          null,
          'queued',
          'submitted',
          JSON.stringify({ spec: job.spec }),
        );
        return undefined;
      })
      .immediate();
    if (existing !== undefined) return this.core.mustGet(existing);
    this.core.advanceHighWater();
    return this.core.mustGet(job.id);
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
    const row = this.core.jobRow(id);
    return row ? toJob(row) : undefined;
  }

  async getJobState(id: string): Promise<JobState | undefined> {
    return this.core.jobState(id) as JobState | undefined;
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
    return done.length > 0 && this.core.advanceHighWater() ? done : [];
  }
  async deleteEndedJobs(before_ms: number, limit: number): Promise<string[]> {
    return this.db.transaction(() => removeEnded(this.db, before_ms, limit)).immediate();
  }
  async usage(): Promise<UserUsage[]> {
    return usageByUser(this.db);
  }

  /** A change of job `id` asked by `actor` for `reason`, for the job-state writes (job-transitions.ts). */
  private change(id: string, actor: string, reason: string): transitions.JobChange {
    return { core: this.core, id, actor, reason };
  }
  async assignJob(
    id: string,
    binding: DeviceBinding,
    not_before_ms: number,
    actor: string,
    reason: string,
  ): Promise<JobRecord> {
    return transitions.assignJob(this.change(id, actor, reason), binding, not_before_ms);
  }
  async retargetJob(id: string, binding: DeviceBinding, actor: string, reason: string): Promise<JobRecord> {
    return transitions.retargetJob(this.change(id, actor, reason), binding);
  }
  async launchJob(id: string, replicas: readonly NewReplica[], actor: string, reason: string): Promise<JobRecord> {
    return transitions.launchJob(this.change(id, actor, reason), replicas);
  }
  async stopJob(
    id: string,
    binding: DeviceBinding,
    kind: StopKind,
    actor: string,
    reason: string,
    detail: TransitionDetail = {},
  ): Promise<JobRecord> {
    return transitions.stopJob(this.change(id, actor, reason), binding, kind, detail);
  }
  async relaunchJob(id: string, not_before_ms: number, actor: string, reason: string): Promise<JobRecord> {
    return transitions.relaunchJob(this.change(id, actor, reason), not_before_ms);
  }
  async requeueJob(id: string, actor: string, reason: string): Promise<JobRecord> {
    return transitions.requeueJob(this.change(id, actor, reason));
  }
  async finishJob(
    id: string,
    to: 'succeeded' | 'failed' | 'cancelled',
    actor: string,
    reason: string,
    detail: TransitionDetail = {},
  ): Promise<JobRecord> {
    return transitions.finishJob(this.change(id, actor, reason), to, detail);
  }

  async listReplicas(job_id: string, attempt?: number): Promise<ReplicaRecord[]> {
    return replicaQueries.listReplicas(this.core, job_id, attempt);
  }
  async listLiveReplicas(page?: LiveReplicaPage): Promise<ReplicaRecord[]> {
    return replicaQueries.listLiveReplicas(this.core, page);
  }
  async listLiveReplicasFor(job_ids: readonly string[], nodes: readonly string[]): Promise<ReplicaRecord[]> {
    return replicaQueries.listLiveReplicasFor(this.core, job_ids, nodes);
  }

  async listReplicasSince(job_ids: readonly string[], since_ms: number): Promise<ReplicaSpan[]> {
    return replicaQueries.listReplicasSince(this.core, job_ids, since_ms);
  }
  async recordReplicaExit(exit: ReplicaExit, actor: string): Promise<boolean> {
    return replicaQueries.recordReplicaExit(this.core, exit, actor);
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
    return reportQueries.listReports(this.core, job_id, limit);
  }
  async getProfile(job_id: string, gpu_type?: string): Promise<ProfileRow[]> {
    return reportQueries.getProfile(this.core, job_id, gpu_type);
  }

  async saveRefit(refit: RefitCommit): Promise<StoredKeyProfile | undefined> {
    return saveRefit(this.core, this.keyProfiles, refit);
  }
  async setProfileUse(
    job_id: string,
    use: ProfileUse,
    actor: string,
    reason: string,
    data: Record<string, unknown>,
  ): Promise<boolean> {
    return setProfileUse(this.core, job_id, use, actor, reason, data);
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
        const state = this.core.jobState(job_id);
        if (state === undefined) throw new GoodputError('E_NOT_FOUND', `no job ${job_id}`);
        this.core.event(job_id, now, actor, kind, state, state, reason, JSON.stringify(data));
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
  async setSlurmAccount(user: string, account: string): Promise<boolean> {
    return tokens.setSlurmAccount(this.db, user, account);
  }
  async getSlurmAccount(user: string): Promise<string | undefined> {
    return tokens.getSlurmAccount(this.db, user);
  }
  async getShareUsage(): Promise<ShareUsage | undefined> {
    return tokens.getShareUsage(this.db);
  }
  async putShareUsage(usage: ShareUsage): Promise<void> {
    tokens.putShareUsage(this.db, usage);
  }
  async getPolicyMemo(): Promise<PolicyMemoRecord | undefined> {
    return tokens.getPolicyMemo(this.db);
  }
  async putPolicyMemo(memo: PolicyMemoRecord): Promise<void> {
    tokens.putPolicyMemo(this.db, memo);
  }
  async deviceTimeSince(since_ms: number, now_ms: number): Promise<DeviceTime[]> {
    return tokens.deviceTimeSince(this.db, since_ms, now_ms);
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
}
