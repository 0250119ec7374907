/** The resource a finding says limits the run. */
export type Bottleneck =
  | 'gpu-compute'
  | 'cpu-compute'
  | 'compute'
  | 'gpu-memory'
  | 'input-pipeline'
  | 'host-overhead'
  | 'sync-points'
  | 'host-device-copy'
  | 'communication'
  | 'cpu-contention'
  | 'system'
  | 'healthy'
  | 'no-data';

export type Severity = 'critical' | 'warning' | 'info';

/**
 * One diagnosis. `id` is stable across versions (scripts and docs refer to it); `evidence` holds
 * the measured numbers; `fix` holds concrete actions (code, flags, environment variables,
 * commands). `impact_pct` estimates the share of run time at stake (0-100), used for ranking.
 */
export interface Finding {
  readonly id: string;
  readonly severity: Severity;
  readonly bottleneck: Bottleneck;
  readonly title: string;
  readonly evidence: readonly string[];
  readonly fix: readonly string[];
  readonly impact_pct: number;
  /** The input(s) the evidence comes from. */
  readonly source: string;
}

const SEVERITY_RANK: Readonly<Record<Severity, number>> = { critical: 0, warning: 1, info: 2 };

/**
 * Orders findings: issues (warning, critical) before notes (info), each by estimated impact, then
 * severity, then id (deterministic). The first finding is therefore the largest measured cause
 * that has a fix, or, when nothing needs fixing, the largest note (e.g. compute-bound). Pure.
 */
export function rankFindings(findings: readonly Finding[]): Finding[] {
  const note = (f: Finding) => (f.severity === 'info' ? 1 : 0);
  return [...findings].sort(
    (a, b) =>
      note(a) - note(b) ||
      b.impact_pct - a.impact_pct ||
      SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
      a.id.localeCompare(b.id),
  );
}

/** Formats a µs quantity for evidence lines. */
export function fmtUs(us: number): string {
  if (Math.abs(us) >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (Math.abs(us) >= 1e3) return `${(us / 1e3).toFixed(1)} ms`;
  return `${Math.round(us)} µs`;
}

/** Formats a percentage with one decimal. */
export function fmtPct(x: number): string {
  return `${x.toFixed(1)}%`;
}
