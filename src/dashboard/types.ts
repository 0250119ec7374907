/**
 * JSON shapes the dashboard's own endpoints return (`/dash/...`), shared with the browser code
 * in web/ (type-only imports). Times are epoch milliseconds (`_ms`); rates are per second.
 */
import type { JobState } from '../store/types.js';

/** Who is logged in (from the bearer token, as the API authenticates it). */
export interface WhoAmI {
  user: string;
  admin: boolean;
}

/** One row of the jobs table. Null where the job has not reported what the column needs. */
export interface JobRow {
  id: string;
  name: string;
  user: string;
  state: JobState;
  replicas: number;
  /** Global batch size of the newest report: local_bsz x (accum_steps + 1) x replicas. */
  batch_size: number | null;
  /** Measured goodput of the newest report (B0-equivalent samples/s). */
  goodput: number | null;
  /** Measured throughput of the newest report (samples/s). */
  throughput: number | null;
  /** Predicted best goodput on the current replicas over that on one replica (fitted model). */
  speedup: number | null;
  /** Share of the declared work done, in [0, 1]; null when the job does not report `remaining_samples`. */
  progress: number | null;
  /** Estimated finish (running jobs that declare their length). */
  eta_ms: number | null;
  restarts: number;
  /** Why the job waits (policy rejection) or the last transition's reason. */
  reason: string;
  submitted_ms: number;
}

/** `GET /dash/jobs`. */
export interface JobsResponse {
  now_ms: number;
  /** One page, newest first (GET /v1/jobs's query: state, user, name, since, limit, cursor). */
  rows: JobRow[];
  /** Where the next page starts; null when `rows` are the last. */
  next_cursor: string | null;
}

/** `GET /dash/jobs/:id/series`: one entry per report, columnar (same length arrays). */
export interface JobSeries {
  t_ms: number[];
  /** 0 from the end of an attempt's reports to the start of the next's (stopped, preempted). */
  replicas: number[];
  /** null where the job ran no replica or reported nothing for long: a gap, never drawn across. */
  local_bsz: (number | null)[];
  accum_steps: (number | null)[];
  batch_size: (number | null)[];
  throughput: (number | null)[];
  efficiency: (number | null)[];
  goodput: (number | null)[];
}

/**
 * Bands of an allocation timeline, columnar: band i is job `labels[job[i]]` on row `row[i]` from
 * `start_ms[i]` to `end_ms[i]`. A label '' marks another user's job (shown, not named).
 */
export interface Timeline {
  from_ms: number;
  to_ms: number;
  rows: string[];
  labels: string[];
  /** Job id per label (same index), '' where not visible; the browser links bands to job pages. */
  ids: string[];
  row: number[];
  job: number[];
  start_ms: number[];
  end_ms: number[];
}

/** A device cell of the cluster grid. `other`: held by a job the caller may not see. */
export type DeviceUse = 'free' | 'job' | 'other' | 'foreign';

export interface ClusterDevice {
  index: number;
  kind: 'gpu' | 'cpu';
  name: string;
  use: DeviceUse;
  /** Holder, when visible to the caller. */
  job: string | null;
  /** Its mark from the verdicts across ranks (slow: placed last; drained: not placed); absent when none. */
  mark?: { kind: 'slow' | 'drained'; reason: string };
}

export interface ClusterNode {
  name: string;
  /** GPU types of its devices in order of first appearance (NodeView.gpu_types). */
  gpu_types: string[];
  devices: ClusterDevice[];
}

/** `GET /dash/cluster`. */
export interface ClusterResponse {
  now_ms: number;
  nodes: ClusterNode[];
  /** Visible jobs holding devices: id -> name, user, state. */
  holders: Record<string, { name: string; user: string; state: JobState }>;
  timeline: Timeline;
}

/** One recorded simulation run (`goodput view`). */
export interface SimRunView {
  label: string;
  num_nodes: number;
  gpus_per_node: number;
  /** Completion time of every finished job (s), ascending. */
  jct_s: number[];
  /** GPU utilization per interval: time (s) and share of GPUs allocated, in [0, 1]. */
  util_t_s: number[];
  util: number[];
  timeline: Timeline;
}

/** `GET /dash/sim`. */
export interface SimResponse {
  runs: SimRunView[];
}

/** `GET /dash/config`: which pages the server offers. */
export interface DashboardConfig {
  mode: 'live' | 'sim';
}
