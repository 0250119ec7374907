/** A device marked by live verdicts across jobs (kept by control/ranks/device-health.ts). */
export interface DeviceMark {
  readonly node: string;
  readonly device: number;
  readonly kind: 'slow' | 'drained';
  /** Straggler and hang verdicts that named it (distinct job attempts). */
  readonly stragglers: number;
  readonly hangs: number;
  readonly since_ms: number;
  readonly reason: string;
}
