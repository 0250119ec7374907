/** Simulation viewer: recorded runs side by side (timeline, GPU utilization) and their JCT CDFs overlaid. */
import uPlot from 'uplot';
import type { SimResponse, SimRunView } from '../../src/dashboard/types.js';
import { getJson } from '../api.js';
import { Chart } from '../chart.js';
import { fmtDuration, fmtPercent } from '../format.js';
import { usePoll } from '../poll.js';
import { ErrorLine } from '../shell.js';
import { TimelineView } from '../timeline.js';

const PALETTE = ['#1a73e8', '#d93025', '#188038', '#f9ab00', '#9334e6', '#e8710a', '#12b5cb', '#5f6368'];

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

export function SimPage() {
  const { data, error } = usePoll(() => getJson<SimResponse>('/dash/sim'), 3_600_000, 'sim');
  if (!data) return <ErrorLine error={error} loading />;
  const runs = data.runs;
  // One x axis for all CDFs: uPlot.join aligns the runs' JCTs (hours), null where a run has no point.
  const cdf = uPlot.join(
    runs.map(
      (r) => [r.jct_s.map((s) => s / 3600), r.jct_s.map((_, i) => (i + 1) / r.jct_s.length)] as uPlot.AlignedData,
    ),
  );
  return (
    <div class="page">
      <table class="runs" id="sim-summary">
        <thead>
          <tr>
            <th>run</th>
            <th>cluster</th>
            <th>jobs finished</th>
            <th>mean JCT</th>
            <th>p50 JCT</th>
            <th>p99 JCT</th>
            <th>mean GPU util</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r, i) => (
            <tr key={r.label}>
              <td>
                <span class="swatch" style={{ background: PALETTE[i % PALETTE.length] }} /> {r.label}
              </td>
              <td>
                {r.num_nodes} x {r.gpus_per_node} GPUs
              </td>
              <td>{r.jct_s.length}</td>
              <td>{fmtDuration(mean(r.jct_s))}</td>
              <td>{fmtDuration(quantile(r.jct_s, 0.5))}</td>
              <td>{fmtDuration(quantile(r.jct_s, 0.99))}</td>
              <td>{fmtPercent(mean(r.util))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Chart
        title="Job completion time (CDF)"
        xLabel="JCT (hours)"
        x={[...cdf[0]]}
        series={runs.map((r, i) => ({
          label: r.label,
          values: [...(cdf[i + 1] as (number | null)[])],
          color: PALETTE[i % PALETTE.length]!,
          stepped: true,
        }))}
        height={240}
      />
      <div class="side-by-side" style={{ gridTemplateColumns: `repeat(${Math.min(runs.length, 3)}, minmax(0, 1fr))` }}>
        {runs.map((r, i) => (
          <RunColumn run={r} color={PALETTE[i % PALETTE.length]!} />
        ))}
      </div>
    </div>
  );
}

function RunColumn(p: { run: SimRunView; color: string }) {
  const r = p.run;
  return (
    <section class="run" data-run={r.label}>
      <h3>{r.label}</h3>
      <Chart
        title="GPU utilization"
        xLabel="hours"
        x={r.util_t_s.map((t) => t / 3600)}
        series={[{ label: 'allocated share', values: r.util, color: p.color }]}
        height={160}
      />
      <h4>Allocation timeline</h4>
      <TimelineView timeline={r.timeline} relative maxHeight={420} />
    </section>
  );
}
