/** `goodput profiles` and the profile line of `goodput show`, in plain words. Pure. */
import type { EventView, JobSummary, ProfileSummaryView, ProfileView } from '../client/client.js';
import { age, formatTable } from '../client/table.js';

const num = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(3));

/** A parameter count in words: 11181642 -> "11.2 M", 7e9 -> "7 B", 850 -> "850". */
export function parameterCount(n: number): string {
  const [scale, unit] = n >= 1e9 ? [1e9, ' B'] : n >= 1e6 ? [1e6, ' M'] : n >= 1e3 ? [1e3, ' k'] : [1, ''];
  return `${Number((n / scale).toPrecision(3))}${unit}`;
}

/** The `profile` line of `goodput show`: the key and whether the job's model came from its profile. */
export function profileLine(
  job: Pick<JobSummary, 'profile_key' | 'profile_use'>,
  events: readonly EventView[],
): string {
  const head = `profile    '${job.profile_key}'`;
  if (job.profile_use === 'discarded') {
    const e = [...events].reverse().find((x) => x.kind === 'profile-discarded');
    return `${head}: discarded${e ? ` at ${e.at}: ${e.reason.replace(/^profile of '[^']*' on [^:]*discarded: /, '')}` : ''}`;
  }
  if (job.profile_use === 'used') {
    const e = events.find((x) => x.kind === 'profile-used');
    const gpu = typeof e?.data.gpu_type === 'string' ? ` on ${e.data.gpu_type}` : '';
    return (
      `${head}: model from the profile${gpu} (what earlier jobs of the key measured), refined by ` +
      `its own reports; 'goodput profiles show ${job.profile_key}'`
    );
  }
  return `${head}: its own measurements only (no earlier job of this key had reported)`;
}

/** `goodput profiles ls` as a table (or a line saying there are none); `scope`: the user whose profile it is, or `shared`. */
export function renderProfileList(profiles: readonly ProfileSummaryView[], now_ms = Date.now()): string {
  if (profiles.length === 0) return 'no profiles yet: a profile key gets one once a job of it has reported step times';
  const rows = profiles.map((p) => [
    p.key,
    p.gpu_type,
    String(p.jobs),
    p.measured_replicas.join(',') || '-',
    p.model_parameters !== null ? parameterCount(p.model_parameters) : '-',
    p.throughput.map((t) => `${t.replicas}:${num(t.samples_per_s)}`).join(' ') || '-',
    age(p.updated_at, now_ms),
    p.scope ?? 'shared',
  ]);
  return formatTable(
    ['key', 'gpu type', 'jobs', 'replicas', 'parameters', 'samples/s (fitted)', 'updated', 'scope'],
    rows,
  );
}

/** `goodput profiles show KEY`: per GPU type, the model's parameter count, the points, the fitted parameters and the gradient trajectory. */
export function renderProfile(views: readonly ProfileView[]): string {
  return views
    .map((p) => {
      const params =
        p.model_parameters !== null
          ? `${parameterCount(p.model_parameters)} parameters (${p.model_parameters}, ` +
            `as the key's latest job reported them)`
          : 'parameters unknown (no job of the key reported model_parameters)';
      const limits = p.limits
        ? `initial batch ${p.limits.init_batch_size}, max ${p.limits.max_batch_size}, ` +
          `local ${p.limits.min_local_bsz}-${p.limits.max_local_bsz}${p.limits.accumulation ? ', accumulation' : ''}`
        : '-';
      const grad =
        p.grad.length === 0
          ? 'no samples (jobs that report remaining_samples add them)'
          : p.grad
              .map((g) => `${Math.round(g.progress * 100)}%: sqr ${g.sqr.toPrecision(3)} var ${g.var.toPrecision(3)}`)
              .join('; ');
      const lines = [
        `profile    '${p.key}' on ${p.gpu_type}: ${p.jobs} job${p.jobs === 1 ? '' : 's'}, updated ${p.updated_at}`,
        `model      ${params}`,
        `fitted     ${
          p.perf
            ? Object.entries(p.perf)
                .map(([k, v]) => `${k}=${v.toPrecision(3)}`)
                .join(' ')
            : 'not yet'
        }`,
        `throughput ${p.throughput.map((t) => `${num(t.samples_per_s)} samples/s on ${t.replicas}`).join(', ') || '-'}`,
        `limits     ${limits}`,
        `gradient   ${grad}`,
      ];
      const points = formatTable(
        ['nodes', 'replicas', 'local bsz', 'accum step s', 'optim step s'],
        p.points.map((q) => [
          String(q.num_nodes),
          String(q.num_replicas),
          String(q.local_bsz),
          q.accum_step_time_s.toPrecision(3),
          q.optim_step_time_s.toPrecision(3),
        ]),
      );
      return `${lines.join('\n')}\n\n${points}`;
    })
    .join('\n\n');
}
