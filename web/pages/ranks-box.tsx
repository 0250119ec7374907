/**
 * The job page's box of the live verdicts across ranks (docs/doctor.md, "Live verdicts across
 * ranks"): the straggler and hang verdicts as the control plane holds them now, and each rank's
 * step, phase and step time. Shown only for a job whose ranks report (the SDK's summaries).
 */
import type { RanksView } from '../../src/api/rank-views.js';
import { callApi } from '../api.js';
import { usePoll } from '../poll.js';

export function RanksBox(p: { id: string; live: boolean }) {
  const ranks = usePoll(() => callApi('GET /v1/jobs/{id}/ranks', { id: p.id }), 3000, `ranks-${p.id}`);
  const v: RanksView | undefined = ranks.data;
  if (!p.live || !v || v.ranks.length === 0) return null;
  const verdict = v.hang ? 'hang' : v.straggler ? 'straggler' : 'none';
  return (
    <div class="fact" id="ranks" data-verdict={verdict}>
      <div class="muted">ranks (every rank's summaries, attempt {v.attempt ?? '-'}, updated as it runs)</div>
      {v.hang && <div class="verdict-bad">{v.hang.line}</div>}
      {v.straggler && <div class="verdict-warn">{v.straggler.line}</div>}
      {!v.hang && !v.straggler && <div>no straggler, no hung rank among {v.ranks.length} ranks</div>}
      <table class="ranks">
        <tbody>
          {v.ranks.map((r) => (
            <tr key={r.rank} data-rank={r.rank}>
              <td>rank {r.rank}</td>
              <td>{r.node || '-'}</td>
              <td>{r.device === null ? '-' : `device ${r.device}`}</td>
              <td>step {r.step}</td>
              <td>{r.phase}</td>
              <td>{r.step_s === null ? '-' : `${(r.step_s * 1000).toFixed(0)} ms/step`}</td>
              <td>heard {r.heard_s_ago.toFixed(0)} s ago</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
