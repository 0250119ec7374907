/**
 * Shares page (issue 48): each team's members, weight and share, and per GPU type its quota,
 * devices in use, borrowed (used beyond the quota) and lent (quota left idle for others), its
 * fair-share factor and decayed usage: what `goodput shares` prints, from the same GET /v1/shares.
 */
import type { TeamView } from '../../src/policy/shares/view.js';
import { callApi } from '../api.js';
import { usePoll } from '../poll.js';
import { ErrorLine } from '../shell.js';

/** "a100 8, cpu 2" of a per-type record, "–" when empty (types in name order). */
function perType(m: Readonly<Record<string, number>>): string {
  const entries = Object.entries(m)
    .filter(([, n]) => n !== 0)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? '–' : entries.map(([type, n]) => `${type} ${n}`).join(', ');
}

const COLUMNS: { key: string; label: string; cell: (t: TeamView) => string; numeric?: boolean }[] = [
  { key: 'team', label: 'team', cell: (t) => t.team },
  { key: 'members', label: 'members', cell: (t) => (t.members.length > 0 ? t.members.join(', ') : '–') },
  { key: 'weight', label: 'weight', cell: (t) => String(t.weight), numeric: true },
  { key: 'share', label: 'share', cell: (t) => `${Math.round(100 * t.share)}%`, numeric: true },
  { key: 'quota', label: 'quota', cell: (t) => perType(t.quota) },
  { key: 'use', label: 'in use', cell: (t) => perType(t.use) },
  { key: 'borrowed', label: 'borrowed', cell: (t) => perType(t.borrowed) },
  { key: 'lent', label: 'lent', cell: (t) => perType(t.lent) },
  { key: 'factor', label: 'fair-share factor', cell: (t) => t.fair_share_factor.toFixed(2), numeric: true },
  {
    key: 'usage',
    label: 'decayed usage',
    cell: (t) => `${t.decayed_usage_device_h.toFixed(2)} device-h`,
    numeric: true,
  },
];

export function SharesPage() {
  const { data, error } = usePoll(() => callApi('GET /v1/shares'), 3000, 'shares');
  if (!data) return <ErrorLine error={error} loading />;
  return (
    <div class="page">
      <ErrorLine error={error} />
      <p class="muted">
        Each team gets its weighted share of every GPU type, at least its quota, whenever its jobs can use it; what a
        team leaves idle is lent to others and taken back by shrinking or stopping the borrowers. The fair-share factor
        (1 = no more than its share used lately) decides who borrows first.
      </p>
      <table class="runs" id="shares-table">
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th class={c.numeric ? 'num' : ''}>{c.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {data.map((t) => (
            <tr key={t.team} data-team={t.team}>
              {COLUMNS.map((c) => (
                <td class={c.numeric ? 'num' : ''} data-col={c.key}>
                  {c.cell(t)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {data.length === 0 && <div class="muted">no teams: no shares file and no user holds devices</div>}
    </div>
  );
}
