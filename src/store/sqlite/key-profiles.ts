import type Database from 'better-sqlite3';
import { clampProgress, emptyProfile, type GradSample, type KeyProfile } from '../../goodput/key-profile.js';
import type { BatchLimits, PerfParams, ProfilePoint } from '../../goodput/types.js';
import { keepReport } from '../../model/profile-keeper.js';
import type { KeyProfileUpdate } from '../store.js';
import type { StoredKeyProfile } from '../types.js';
import type { Row } from './rows.js';

const parse = <T>(v: unknown): T | null => (typeof v === 'string' ? (JSON.parse(v) as T) : null);

/**
 * The profiles of profile keys in SQLite (tables of migration 4, `model_parameters` of 5): reads
 * build the pure `KeyProfile` of goodput/key-profile.ts, merges follow model/profile-keeper.ts
 * `keepReport`.
 * Synchronous; the caller (SqliteStore) owns the connection. Not on the report path: merges come
 * from refits (Store.saveRefit).
 */
export class SqliteKeyProfiles {
  private readonly stmts;

  constructor(
    private readonly db: Database.Database,
    private readonly now_ms: () => number,
  ) {
    this.stmts = {
      head: db.prepare('SELECT * FROM key_profiles WHERE key = ? AND gpu_type = ?'),
      points: db.prepare('SELECT * FROM key_profile_points WHERE key = ? AND gpu_type = ? ORDER BY rowid'),
      grad: db.prepare(
        'SELECT progress, sqr, var FROM key_profile_grad WHERE key = ? AND gpu_type = ? ORDER BY progress',
      ),
      jobs: db.prepare('SELECT job_id FROM key_profile_jobs WHERE key = ? AND gpu_type = ? ORDER BY rowid').pluck(),
      upsertHead:
        db.prepare(`INSERT INTO key_profiles (key, gpu_type, limits, model_parameters, updated_at_ms) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (key, gpu_type) DO UPDATE SET limits = coalesce(excluded.limits, limits), model_parameters = excluded.model_parameters,
        updated_at_ms = excluded.updated_at_ms`),
      upsertPoint:
        db.prepare(`INSERT INTO key_profile_points (key, gpu_type, num_nodes, num_replicas, local_bsz, accum_step_time_s, optim_step_time_s)
        VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key, gpu_type, num_nodes, num_replicas, local_bsz) DO UPDATE SET
        accum_step_time_s = excluded.accum_step_time_s, optim_step_time_s = excluded.optim_step_time_s`),
      upsertGrad: db.prepare(`INSERT INTO key_profile_grad (key, gpu_type, progress, sqr, var) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (key, gpu_type, progress) DO UPDATE SET sqr = excluded.sqr, var = excluded.var`),
      addJob: db.prepare('INSERT OR IGNORE INTO key_profile_jobs (key, gpu_type, job_id) VALUES (?, ?, ?)'),
      perf: db.prepare('UPDATE key_profiles SET perf = ? WHERE key = ? AND gpu_type = ?'),
      list: db.prepare('SELECT key, gpu_type FROM key_profiles ORDER BY key, gpu_type'),
      listKey: db.prepare('SELECT key, gpu_type FROM key_profiles WHERE key = ? ORDER BY gpu_type'),
      removeParts: ['key_profile_points', 'key_profile_grad', 'key_profile_jobs'].map((t) =>
        db.prepare(`DELETE FROM ${t} WHERE key = ? AND gpu_type = ?`),
      ),
      removeHead: db.prepare('DELETE FROM key_profiles WHERE key = ? AND gpu_type = ?'),
    };
  }

  /** The stored profile of (`key`, `gpu_type`), or undefined. */
  get(key: string, gpu_type: string): StoredKeyProfile | undefined {
    const head = this.stmts.head.get(key, gpu_type) as Row | undefined;
    if (!head) return undefined;
    const points = (this.stmts.points.all(key, gpu_type) as Row[]).map((r): ProfilePoint => ({
      num_nodes: r.num_nodes as number,
      num_replicas: r.num_replicas as number,
      local_bsz: r.local_bsz as number,
      accum_step_time_s: r.accum_step_time_s as number,
      optim_step_time_s: r.optim_step_time_s as number,
    }));
    const grad = this.stmts.grad.all(key, gpu_type) as GradSample[];
    const job_ids = this.stmts.jobs.all(key, gpu_type) as string[];
    const model_parameters = head.model_parameters as number | null;
    return {
      key,
      gpu_type,
      points,
      grad: grad.map((g) => ({ progress: g.progress, sqr: g.sqr, var: g.var })),
      jobs: job_ids.length,
      max_measured_replicas: points.reduce((m, p) => Math.max(m, p.num_replicas), 0),
      ...(model_parameters !== null && model_parameters > 0 ? { model_parameters } : {}),
      perf: parse<PerfParams>(head.perf),
      limits: parse<BatchLimits>(head.limits),
      job_ids,
      updated_at_ms: head.updated_at_ms as number,
    };
  }

  /** Profiles of one key or all. */
  list(key?: string): StoredKeyProfile[] {
    const ids = (key === undefined ? this.stmts.list.all() : this.stmts.listKey.all(key)) as {
      key: string;
      gpu_type: string;
    }[];
    return ids.map((id) => this.get(id.key, id.gpu_type)!);
  }

  /** See Store.mergeKeyProfile: one transaction. */
  merge(u: KeyProfileUpdate): StoredKeyProfile {
    return this.db.transaction(() => this.mergeIn(u)).immediate();
  }

  /** See Store.deleteKeyProfile: one transaction. */
  remove(key: string, gpu_type: string): boolean {
    return this.db.transaction(() => this.removeIn(key, gpu_type)).immediate();
  }

  /** `merge` inside the caller's transaction. */
  mergeIn(u: KeyProfileUpdate): StoredKeyProfile {
    const before: KeyProfile = this.get(u.key, u.gpu_type) ?? emptyProfile(u.key, u.gpu_type);
    const new_job = this.stmts.addJob.run(u.key, u.gpu_type, u.job_id).changes > 0;
    // The one profile keeper's pure merge (model/profile-keeper.ts) decides (replacement per
    // configuration and progress, clamping); the tables then hold its result.
    const merged = keepReport(before, { ...u, new_job }).profile;
    this.stmts.upsertHead.run(
      u.key,
      u.gpu_type,
      u.limits ? JSON.stringify(u.limits) : null,
      merged.model_parameters ?? null,
      this.now_ms(),
    );
    for (const p of u.points)
      this.stmts.upsertPoint.run(
        u.key,
        u.gpu_type,
        p.num_nodes,
        p.num_replicas,
        p.local_bsz,
        p.accum_step_time_s,
        p.optim_step_time_s,
      );
    const added = new Set(u.grad.map((g) => clampProgress(g.progress)));
    for (const g of merged.grad)
      if (added.has(g.progress)) this.stmts.upsertGrad.run(u.key, u.gpu_type, g.progress, g.sqr, g.var);
    return this.get(u.key, u.gpu_type)!;
  }

  /** `remove` inside the caller's transaction. */
  removeIn(key: string, gpu_type: string): boolean {
    for (const part of this.stmts.removeParts) part.run(key, gpu_type);
    return this.stmts.removeHead.run(key, gpu_type).changes > 0;
  }

  /** See Store.saveKeyProfilePerf. */
  savePerf(key: string, gpu_type: string, perf: PerfParams): boolean {
    return this.stmts.perf.run(JSON.stringify(perf), key, gpu_type).changes > 0;
  }
}
