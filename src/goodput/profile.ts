/** From one measured training step to the profile point the throughput fit reads (pollux-spec §3.2). */
import type { ProfilePoint } from './types.js';

/** What a measurement tells of one optimizer step (a subset of the report's fields). */
export interface MeasuredStep {
  num_nodes: number;
  num_replicas: number;
  local_bsz: number;
  /** Extra accumulation micro-steps (the step ran accum_steps + 1 micro-steps). */
  accum_steps: number;
  /** Wall time of the whole optimizer step, all micro-steps and the synchronization (s). */
  step_time_s: number;
  /** Time of the step spent synchronizing gradients (s). */
  sync_time_s: number;
}

/**
 * Splits a measured step into the model's two times: one accumulation micro-step takes
 * (step - sync) / (a + 1), and the optimizer step is what remains after the a extra micro-steps,
 * step - a * accum. Negative differences (clock noise) count as 0. Pure.
 */
export function profilePoint(m: MeasuredStep): ProfilePoint {
  const accum_step_time_s = Math.max(m.step_time_s - m.sync_time_s, 0) / (m.accum_steps + 1);
  const optim_step_time_s = Math.max(m.step_time_s - m.accum_steps * accum_step_time_s, 0);
  return {
    num_nodes: m.num_nodes,
    num_replicas: m.num_replicas,
    local_bsz: m.local_bsz,
    accum_step_time_s,
    optim_step_time_s,
  };
}
