/**
 * What `GET /v1/jobs/{id}/ranks` answers and `POST /v1/nodes/clear` takes: plain types and a
 * schema, free of the server's modules, so the API contract (and the web bundle) can name them.
 */
import { z } from 'zod';
import type { HangVerdict } from '../doctor/ranks/hang.js';
import type { StragglerVerdict } from '../doctor/ranks/straggler.js';

/** One rank as `GET /v1/jobs/{id}/ranks` shows it. */
export interface RankRowView {
  rank: number;
  node: string;
  device: number | null;
  step: number;
  phase: string;
  /** Seconds since its last summary and since it last finished a step (null: never). */
  heard_s_ago: number;
  progress_s_ago: number | null;
  /** Its step time over its recent summaries (s), null without steps. */
  step_s: number | null;
}

/** A live replica's main process (what the control plane reads of a plain job too). */
export interface ProcessView {
  rank: number;
  state: string | null;
  cpu_s: number | null;
  last_log_line: string;
}

/** Answer of `GET /v1/jobs/{id}/ranks`. */
export interface RanksView {
  attempt: number | null;
  ranks: RankRowView[];
  straggler: StragglerVerdict | null;
  hang: HangVerdict | null;
  processes: ProcessView[];
}

/** Body of `POST /v1/nodes/clear`. */
export const nodeClearBodySchema = z.object({
  node: z.string().min(1).max(256),
  device: z.number().int().min(0).max(4096).optional(),
});
