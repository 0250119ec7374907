/**
 * Plan page: a profile key's predicted time to a target on each GPU type and count, from the
 * profiles the control plane learned, by goodput plan's planner (GET /dash/plan/:key): a chart
 * of time to target over GPUs per type, the answers, and the table with where each row comes from
 * and each prediction's 80% interval (docs/planner.md), with what the interval rests on.
 */
import { useState } from 'preact/hooks';
import type { PlanReport } from '../../src/planner/plan-report.js';
import { getJson } from '../api.js';
import { Chart } from '../chart.js';
import { jobColorAt } from '../../src/dashboard/colors.js';
import { fmtDuration, fmtNumber } from '../format.js';
import { usePoll } from '../poll.js';
import { ErrorLine } from '../shell.js';

type Row = PlanReport['rows'][number];

/** "5.1 h-7.9 h": a time's 80% interval (planner/plan-interval.ts). */
const timeRange = (r: Row): string => `${fmtDuration(r.time_interval_s[0])}-${fmtDuration(r.time_interval_s[1])}`;
const costRange = (r: Row): string =>
  r.cost_interval === null ? '' : `${r.cost_interval[0].toFixed(2)}-${r.cost_interval[1].toFixed(2)}`;

const rowText = (r: Row | null, currency: string): string =>
  r === null
    ? 'none'
    : `${r.gpus} x ${r.gpu_type} (${r.nodes} node${r.nodes > 1 ? 's' : ''}): ` +
      `${fmtDuration(r.time_s ?? Infinity)} (80%: ${timeRange(r)}), ` +
      `${r.cost === null ? 'no price' : `${r.cost.toFixed(2)} ${currency} (80%: ${costRange(r)})`} [${r.source}]`;

export function PlanPage(p: { planKey: string }) {
  const [target, setTarget] = useState('1000000');
  const query = `/dash/plan/${encodeURIComponent(p.planKey)}?target_samples=${encodeURIComponent(target)}`;
  const plan = usePoll(() => getJson<PlanReport>(query), 60000, query);
  const r = plan.data;
  return (
    <div class="page">
      <h2>
        Plan for <span id="plan-key">{p.planKey}</span>
      </h2>
      <label>
        target samples{' '}
        <input id="plan-target" value={target} onChange={(e) => setTarget((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorLine error={plan.error} loading={!r && !plan.error} />
      {r && <PlanBody r={r} />}
    </div>
  );
}

function PlanBody({ r }: { r: PlanReport }) {
  const types = r.types.map((t) => t.gpu_type);
  const gpus = [...new Set(r.rows.map((x) => x.gpus))].sort((a, b) => a - b);
  // Time to target in hours per type, null where the type has no row (or it never finishes).
  const series = types.map((t, i) => ({
    label: t,
    color: jobColorAt(i),
    values: gpus.map((g) => {
      const row = r.rows.find((x) => x.gpu_type === t && x.gpus === g);
      return row && row.time_s !== null && Number.isFinite(row.time_s) ? row.time_s / 3600 : null;
    }),
  }));
  return (
    <div>
      <Chart
        title="time to target (hours, log) over GPUs"
        x={gpus}
        series={series}
        xLabel="GPUs (log)"
        log
        logX
        height={260}
      />
      <ul id="plan-answers">
        <li>fastest within the budget: {rowText(r.answers.fastest_within_budget, r.currency)}</li>
        <li>cheapest within the deadline: {rowText(r.answers.cheapest_within_deadline, r.currency)}</li>
        <li>knee: {r.answers.knee.map((k) => `${k.gpu_type} ${k.gpus}`).join(', ') || 'none'}</li>
      </ul>
      <table id="plan-table">
        <thead>
          <tr>
            <th>type</th>
            <th>GPUs</th>
            <th>nodes</th>
            <th>source</th>
            <th>samples/s</th>
            <th>efficiency</th>
            <th>batch</th>
            <th>time</th>
            <th>time, 80%</th>
            <th>GPU-h</th>
            <th>cost</th>
            <th>cost, 80%</th>
            <th>interval from</th>
            <th>advice</th>
          </tr>
        </thead>
        <tbody>
          {r.rows.map((x) => (
            <tr key={`${x.gpu_type}-${x.gpus}`} data-source={x.source}>
              <td>{x.gpu_type}</td>
              <td>{x.gpus}</td>
              <td>{x.nodes}</td>
              <td>{x.source}</td>
              <td>{fmtNumber(x.samples_per_s)}</td>
              <td>{x.efficiency.toFixed(2)}</td>
              <td>{`${x.batch_size} (${x.local_bsz} x ${x.accum_steps + 1})`}</td>
              <td>{fmtDuration(x.time_s ?? Infinity)}</td>
              <td class="plan-time-interval">{timeRange(x)}</td>
              <td>{fmtNumber(x.gpu_hours)}</td>
              <td>{x.cost === null ? '–' : x.cost.toFixed(2)}</td>
              <td>{x.cost_interval === null ? '–' : costRange(x)}</td>
              <td data-calibrated={String(x.interval_calibrated)}>
                {x.interval_basis}
                {x.interval_calibrated ? ' (calibrated by bench:plan)' : ' (not calibrated)'}
              </td>
              <td>{x.advice.join('; ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ul class="muted">
        {r.types.map((t) => (
          <li key={t.gpu_type}>
            {t.gpu_type}: {t.source}: {t.how}
          </li>
        ))}
        {r.notes.map((n) => (
          <li key={n}>note: {n}</li>
        ))}
        <li>
          GPU table of {r.table.date} ({r.table.source})
        </li>
      </ul>
    </div>
  );
}
