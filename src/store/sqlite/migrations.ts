import type Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';

/**
 * Versioned schema of the SQLite store. Migration `i` brings the database from version `i` to
 * `i + 1` (PRAGMA user_version); never edit a released migration, append a new one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    user TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    submitted_at_ms INTEGER NOT NULL,
    started_at_ms INTEGER,
    finished_at_ms INTEGER,
    launches INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    allocation TEXT NOT NULL DEFAULT '[]',
    devices TEXT NOT NULL DEFAULT '[]',
    not_before_ms INTEGER NOT NULL DEFAULT 0,
    launched_at_ms INTEGER,
    stop_requested_at_ms INTEGER,
    attained_service_gpu_s REAL NOT NULL DEFAULT 0,
    max_profiled_replicas INTEGER NOT NULL DEFAULT 0,
    limits TEXT,
    perf TEXT,
    grad TEXT,
    step INTEGER NOT NULL DEFAULT 0,
    samples REAL NOT NULL DEFAULT 0,
    last_report_at_ms INTEGER,
    reason TEXT NOT NULL DEFAULT ''
  );
  CREATE INDEX jobs_state ON jobs(state);
  CREATE INDEX jobs_user ON jobs(user, submitted_at_ms);
  CREATE TABLE replicas (
    job_id TEXT NOT NULL REFERENCES jobs(id),
    attempt INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    device INTEGER,
    pid INTEGER NOT NULL,
    proc_start TEXT NOT NULL,
    log_path TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    exit_code INTEGER,
    exited_at_ms INTEGER,
    PRIMARY KEY (job_id, attempt, rank)
  );
  CREATE INDEX replicas_live ON replicas(exit_code) WHERE exit_code IS NULL;
  CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    from_state TEXT,
    to_state TEXT,
    reason TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}'
  );
  CREATE INDEX events_job ON events(job_id, id);
  CREATE TABLE reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    received_at_ms INTEGER NOT NULL,
    step INTEGER NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX reports_job ON reports(job_id, id);
  CREATE TABLE profiles (
    job_id TEXT NOT NULL,
    num_nodes INTEGER NOT NULL,
    num_replicas INTEGER NOT NULL,
    local_bsz INTEGER NOT NULL,
    count INTEGER NOT NULL,
    sum_accum_step_time_s REAL NOT NULL,
    sum_optim_step_time_s REAL NOT NULL,
    PRIMARY KEY (job_id, num_nodes, num_replicas, local_bsz)
  );
  CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    admin INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
  );
  `,
  // 1 -> 2: the job's remaining work as last reported by the SDK (null = unknown).
  `
  ALTER TABLE jobs ADD COLUMN remaining_samples REAL;
  `,
  // 2 -> 3: what a preemption would cost (the newest reported checkpoint and whether the job
  // checkpoints when stopped, docs/contract.md) and failure handling (store/lifecycle.ts): why
  // the replicas were stopped, the last failure, the latest health finding, and the newest step
  // time (hung detection); token expiry and revocation; the Unix account each user's jobs run
  // as (--run-as-owner); multi-node backends: the node a replica runs on, and the backend's id of
  // its attempt (the Slurm job id; '' for local processes).
  `
  ALTER TABLE jobs ADD COLUMN checkpoint_at_ms INTEGER;
  ALTER TABLE jobs ADD COLUMN checkpoint_on_stop INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE jobs ADD COLUMN stop_kind TEXT;
  ALTER TABLE jobs ADD COLUMN last_failure TEXT;
  ALTER TABLE jobs ADD COLUMN health TEXT;
  ALTER TABLE jobs ADD COLUMN last_step_time_s REAL;
  ALTER TABLE tokens ADD COLUMN expires_at_ms INTEGER;
  ALTER TABLE tokens ADD COLUMN revoked_at_ms INTEGER;
  CREATE TABLE users (
    user TEXT PRIMARY KEY,
    unix_user TEXT NOT NULL
  );
  ALTER TABLE replicas ADD COLUMN node TEXT NOT NULL DEFAULT 'local';
  ALTER TABLE replicas ADD COLUMN launch_id TEXT NOT NULL DEFAULT '';
  `,
  // 3 -> 4: profiles of profile keys: per (key, GPU type) the merged profile points
  // (one per configuration, in first-seen order: rowid), the gradient trajectory by progress, the
  // jobs that contributed, the fitted throughput parameters and the newest limits; per job, how
  // it uses its key's profile.
  `
  ALTER TABLE jobs ADD COLUMN profile_use TEXT;
  CREATE TABLE key_profiles (
    key TEXT NOT NULL,
    gpu_type TEXT NOT NULL,
    perf TEXT,
    limits TEXT,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (key, gpu_type)
  );
  CREATE TABLE key_profile_points (
    key TEXT NOT NULL,
    gpu_type TEXT NOT NULL,
    num_nodes INTEGER NOT NULL,
    num_replicas INTEGER NOT NULL,
    local_bsz INTEGER NOT NULL,
    accum_step_time_s REAL NOT NULL,
    optim_step_time_s REAL NOT NULL,
    UNIQUE (key, gpu_type, num_nodes, num_replicas, local_bsz)
  );
  CREATE TABLE key_profile_grad (
    key TEXT NOT NULL,
    gpu_type TEXT NOT NULL,
    progress REAL NOT NULL,
    sqr REAL NOT NULL,
    var REAL NOT NULL,
    PRIMARY KEY (key, gpu_type, progress)
  );
  CREATE TABLE key_profile_jobs (
    key TEXT NOT NULL,
    gpu_type TEXT NOT NULL,
    job_id TEXT NOT NULL,
    PRIMARY KEY (key, gpu_type, job_id)
  );
  `,
  // 4 -> 5: the parameter count of the job's model as it last reported it (docs/contract.md
  // `model_parameters`; null = never reported), and that of a profile key's model as its latest
  // job reported it (the gradient size of the cluster network model, goodput/network-model.ts).
  `
  ALTER TABLE jobs ADD COLUMN model_parameters INTEGER;
  ALTER TABLE key_profiles ADD COLUMN model_parameters INTEGER;
  `,
  // 5 -> 6: the measured correction of the job's fitted throughput model (goodput/step-correction.ts),
  // over the points it was fitted on, saved with `perf` by refits under a policy that keeps profiles.
  `
  ALTER TABLE jobs ADD COLUMN correction TEXT;
  `,
  // 6 -> 7: paged, filtered listing (job-page.ts): every filter walks an index in submission
  // order (rowid, the tie-break, is part of every index).
  `
  CREATE INDEX jobs_submitted ON jobs(submitted_at_ms);
  CREATE INDEX jobs_state_submitted ON jobs(state, submitted_at_ms);
  CREATE INDEX jobs_name_submitted ON jobs(name, submitted_at_ms);
  `,
  // 7 -> 8: idempotency keys of submits (the Idempotency-Key header): a retried submit gets the
  // job its first attempt created.
  `
  CREATE TABLE submit_keys (
    user TEXT NOT NULL,
    key TEXT NOT NULL,
    job_id TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (user, key)
  );
  `,
  // 8 -> 9: a checksum of each event's text (rows.ts eventCrc): a byte flipped on disk in an
  // event's reason or data is shown as altered instead of served as true (quick_check sees only
  // the file's structure). Events from before have none.
  `
  ALTER TABLE events ADD COLUMN crc INTEGER;
  `,
  // 9 -> 10: measurements per (job, GPU type). Each replica records the type of its devices; a
  // job's per-configuration profile rows are kept per type of the attempt that measured them, so
  // that a job moved to another type is fitted on that type's points only. Rows from before keep
  // type '' (unknown), which counts for every type (store.ts `getProfile`).
  `
  ALTER TABLE replicas ADD COLUMN gpu_type TEXT NOT NULL DEFAULT '';
  CREATE TABLE profiles_typed (
    job_id TEXT NOT NULL,
    gpu_type TEXT NOT NULL DEFAULT '',
    num_nodes INTEGER NOT NULL,
    num_replicas INTEGER NOT NULL,
    local_bsz INTEGER NOT NULL,
    count INTEGER NOT NULL,
    sum_accum_step_time_s REAL NOT NULL,
    sum_optim_step_time_s REAL NOT NULL,
    PRIMARY KEY (job_id, gpu_type, num_nodes, num_replicas, local_bsz)
  );
  INSERT INTO profiles_typed (job_id, gpu_type, num_nodes, num_replicas, local_bsz, count, sum_accum_step_time_s, sum_optim_step_time_s)
    SELECT job_id, '', num_nodes, num_replicas, local_bsz, count, sum_accum_step_time_s, sum_optim_step_time_s FROM profiles;
  DROP TABLE profiles;
  ALTER TABLE profiles_typed RENAME TO profiles;
  `,
  // 10 -> 11: reads that follow the active and recent jobs, not the history (history.ts): per-user
  // counts of a state (submit limits), jobs by end time (the dashboard's window, retention); the
  // GPU time and count of jobs retention removed, per user, so usage totals survive it.
  `
  CREATE INDEX jobs_user_state ON jobs(user, state);
  CREATE INDEX jobs_finished ON jobs(finished_at_ms);
  CREATE INDEX submit_keys_job ON submit_keys(job_id);
  CREATE TABLE usage_removed (
    user TEXT PRIMARY KEY,
    jobs INTEGER NOT NULL,
    gpu_s REAL NOT NULL
  );
  `,
  // 11 -> 12: the Slurm account a user's jobs are charged to when they run as their owner on Slurm
  // (goodput token create --slurm-account; NULL: the server's --account, else Slurm's default).
  `
  ALTER TABLE users ADD COLUMN slurm_account TEXT;
  `,
  // 12 -> 13: decayed usage of teams and users (issue 48: fair share remembers past usage across
  // restarts; policy/shares/usage.ts), one row per (kind, name), all advanced to the same at_ms.
  `
  CREATE TABLE share_usage (
    kind TEXT NOT NULL CHECK (kind IN ('team', 'user')),
    name TEXT NOT NULL,
    device_s REAL NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (kind, name)
  );
  `,
  // 13 -> 14: the launcher's per-tick read of the live replicas on given nodes (issue #49: every
  // live replica, 16,000 at 16,384 GPUs, was read four times a second while any job started).
  `
  CREATE INDEX replicas_live_node ON replicas(node) WHERE exit_code IS NULL;
  `,
  // 14 -> 15: the live replicas in (job, attempt, rank) order, a page at a time (the watch, issue
  // #49): with an index on exit_code alone, every page read and sorted all 16,000 live replicas at
  // 16,384 GPUs. The same rows as replicas_live, in key order, so it replaces it.
  `
  CREATE INDEX replicas_live_key ON replicas(job_id, attempt, rank) WHERE exit_code IS NULL;
  DROP INDEX replicas_live;
  `,
  // 15 -> 16: the policy's memos saved across a restart (issue #49; goodput/memo-bank.ts), one row.
  `
  CREATE TABLE policy_memo (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    saved_ms INTEGER NOT NULL,
    body BLOB NOT NULL
  );
  `,
];

/** Brings `db` to the newest schema version; refuses (E_STORE_VERSION) a database newer than this code. */
export function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > MIGRATIONS.length) {
    throw new GoodputError(
      'E_STORE_VERSION',
      `database schema version ${version} is newer than this goodput (${MIGRATIONS.length}); upgrade goodput`,
    );
  }
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
