/**
 * One measured configuration of an application on one GPU type: the data the cross-type
 * prediction (type-transfer.ts) reads and predicts. Plain data; pure.
 */

/**
 * A measured step of data-parallel training. Invariants: num_replicas >= num_nodes >= 1;
 * placement, when known, has num_nodes entries >= 1 summing to num_replicas; local_bsz >= 1;
 * step_time_s > 0; 0 <= sync_time_s.
 */
export interface TypeMeasurement {
  /** GPUs per node, when the measurement names them (a placement); undefined when only the counts are known. */
  placement?: readonly number[] | undefined;
  num_nodes: number;
  num_replicas: number;
  /** Per-GPU batch (samples). */
  local_bsz: number;
  /** Time of one optimizer step, synchronization included (s). */
  step_time_s: number;
  /** The part of the step spent synchronizing gradients, as measured (s). */
  sync_time_s: number;
}

/** Samples per second of a measurement: replicas x local batch / step time. */
export function measuredThroughput(m: TypeMeasurement): number {
  return (m.num_replicas * m.local_bsz) / m.step_time_s;
}
