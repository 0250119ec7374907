/** `goodput plan`'s outputs: the table with its answers, and a self-contained HTML chart. */
import type { PlanRow, Undecided } from './plan.js';
import type { PlanReport } from './plan-report.js';

/** Seconds as `45s`, `12m`, `3.4h`, `2.1d`. */
export function fmtDuration(s: number): string {
  if (!Number.isFinite(s)) return 'never';
  if (s < 10) return `${s < 0.1 ? s.toPrecision(1) : s.toFixed(1)}s`;
  if (s < 90) return `${Math.round(s)}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${(s / 3600).toFixed(1)}h`;
  return `${(s / 86400).toFixed(1)}d`;
}

function fmtBytes(b: number | null): string {
  if (b === null) return '-';
  if (b >= 1024 ** 3) return `${(b / 1024 ** 3).toFixed(1)}G`;
  return `${Math.round(b / 1024 ** 2)}M`;
}

function fmtNumber(x: number): string {
  return x >= 100 ? Math.round(x).toString() : x >= 10 ? x.toFixed(1) : x.toPrecision(2);
}

const fmtCost = (c: number | null, currency: string): string =>
  c === null ? '-' : `${c < 10 ? c.toFixed(2) : Math.round(c)} ${currency}`;

/** `a-b` of two durations, shown beside the prediction as its 80% interval. */
const fmtTimeRange = (r: readonly [number, number]): string => `${fmtDuration(r[0])}-${fmtDuration(r[1])}`;
const fmtCostRange = (r: readonly [number, number] | null, currency: string): string =>
  r === null ? '-' : `${fmtCost(r[0], '').trim()}-${fmtCost(r[1], currency)}`;

function describe(row: PlanRow | null, currency: string): string {
  if (!row) return 'none';
  const cost =
    row.cost === null
      ? fmtCost(null, currency)
      : `${fmtCost(row.cost, currency)} (80%: ${fmtCostRange(row.cost_interval, currency)})`;
  return (
    `${row.gpus} x ${row.gpu_type} (${row.nodes} node${row.nodes > 1 ? 's' : ''}): ` +
    `${fmtDuration(row.time_s)} (80%: ${fmtTimeRange(row.time_interval_s)}), ${cost} [` +
    `${row.source}]`
  );
}

/** An answer the intervals cannot settle, and the measurement that would. */
export function undecidedLine(u: Undecided, key: string): string {
  const m = u.measure;
  const time = `${Math.round(m.time_s / 60)} minutes`;
  const why = u.rival
    ? `${u.chosen.gpus} x ${u.chosen.gpu_type} or ${u.rival.gpus} x ${u.rival.gpu_type}: their 80% intervals overlap, too wide to choose`
    : `${u.chosen.gpus} x ${u.chosen.gpu_type}: its 80% interval (${fmtTimeRange(u.chosen.time_interval_s)}) is too wide to book on`;
  return (
    `${u.answer}: ${why}; ` +
    `measure ${m.gpus} GPU${m.gpus > 1 ? 's' : ''} of type ${m.gpu_type} for ${time} ('goodput ` +
    `profile --profile ${key} --gpus ${m.gpus} --time-s ${m.time_s} -- <command>' on a machine ` +
    `with ${m.gpu_type} GPUs) to narrow this`
  );
}

/** The plan as text: the table, the answers, the advice and the notes. */
export function renderPlan(r: PlanReport): string {
  const header = [
    'type',
    'GPUs',
    'nodes',
    'source',
    'samples/s',
    'eff',
    'batch (b x a+1)',
    'mem/GPU',
    'mem 80%',
    'time',
    'time 80%',
    'GPU-h',
    'cost',
    'cost 80%',
  ];
  const lines = r.rows.map((row) => [
    row.gpu_type,
    String(row.gpus),
    String(row.nodes),
    row.source,
    fmtNumber(row.samples_per_s),
    row.efficiency.toFixed(2),
    `${row.batch_size} (${row.local_bsz} x ${row.accum_steps + 1})`,
    row.fits ? (row.memory_per_gpu_bytes === null ? '?' : fmtBytes(row.memory_per_gpu_bytes)) : 'no fit',
    row.memory_interval_bytes
      ? `${fmtBytes(row.memory_interval_bytes[0])}-${fmtBytes(row.memory_interval_bytes[1])}`
      : '-',
    fmtDuration(row.time_s),
    Number.isFinite(row.time_s) ? fmtTimeRange(row.time_interval_s) : '-',
    Number.isFinite(row.gpu_hours) ? fmtNumber(row.gpu_hours) : '-',
    fmtCost(row.cost, r.currency),
    fmtCostRange(row.cost_interval, r.currency),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const out: string[] = [];
  out.push(
    `Plan for '${r.key}': ${r.target_samples} samples` +
      `${r.deadline_s !== null ? `, deadline ${fmtDuration(r.deadline_s)}` : ''}` +
      `${r.budget !== null ? `, budget ${r.budget} ${r.currency}` : ''}`,
  );
  out.push('');
  out.push(
    header
      .map((h, i) => h.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  for (const l of lines)
    out.push(
      l
        .map((c, i) => (i >= 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    );
  out.push('');
  out.push(
    `fastest${r.budget !== null ? ' within the budget' : ''}:   ${describe(r.answers.fastest_within_budget, r.currency)}`,
  );
  out.push(
    `cheapest${r.deadline_s !== null ? ' within the deadline' : ''}: ${describe(r.answers.cheapest_within_deadline, r.currency)}`,
  );
  out.push(
    `knee (doubling buys < half the ideal speed-up): ${r.answers.knee.map((k) => `${k.gpu_type} ${k.gpus}`).join(', ') || 'none'}`,
  );
  for (const u of r.answers.undecided) out.push(undecidedLine(u, r.key));
  out.push('');
  out.push('80% intervals (time, cost):');
  for (const line of intervalLines(r.rows)) out.push(`  ${line}`);
  const memoryNotes = [
    ...new Set(r.rows.flatMap((row) => (row.memory_note ? [`${row.gpu_type}: ${row.memory_note}`] : []))),
  ];
  for (const n of memoryNotes) out.push(`mem/GPU ? ${n}`);
  if (r.rows.some((row) => row.gpu_type.toLowerCase() === 'cpu')) {
    out.push(
      'cpu rows: the CPU slots measured (one node, no more slots than measured); never priced or recommended as a GPU type',
    );
  }
  const advice = adviceByType(r.rows);
  if (advice.length > 0) {
    out.push('');
    out.push('advice:');
    for (const a of advice) out.push(`  ${a}`);
  }
  out.push('');
  out.push('how each type is predicted:');
  for (const t of r.types) out.push(`  ${t.gpu_type}: ${t.source}: ${t.how}`);
  out.push(
    `GPU table of ${r.table.date} (${r.table.source}); prices and specs may be out of date: --prices FILE replaces them`,
  );
  for (const n of r.notes) out.push(`note: ${n}`);
  return out.join('\n');
}

/** What each row's 80% interval rests on, rows grouped by basis: `basis: T4 estimated, A100 estimated`. */
export function intervalLines(rows: readonly PlanRow[]): string[] {
  const byBasis = new Map<string, Set<string>>();
  for (const row of rows) {
    const basis = `${row.interval_basis}${row.interval_calibrated ? ' (calibration measured by bench:plan)' : ''}`;
    byBasis.set(basis, (byBasis.get(basis) ?? new Set()).add(`${row.gpu_type} ${row.source}`));
  }
  return [...byBasis.entries()].map(([basis, rs]) => `${[...rs].join(', ')}: ${basis}`);
}

/** Each type's distinct advice with the GPU counts it applies to. */
export function adviceByType(rows: readonly PlanRow[]): string[] {
  const byAdvice = new Map<string, { type: string; gpus: number[] }>();
  for (const row of rows) {
    for (const a of row.advice) {
      const generic = a.replace(/ \(\d+% of the step\)/, '').trim();
      const key = `${row.gpu_type}\n${generic}`;
      const entry = byAdvice.get(key) ?? { type: row.gpu_type, gpus: [] };
      entry.gpus.push(row.gpus);
      byAdvice.set(key, entry);
    }
  }
  return [...byAdvice.entries()].map(([key, e]) => `${e.type} at ${e.gpus.join(', ')} GPU(s): ${key.split('\n')[1]}`);
}

const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A self-contained HTML page: time to target over GPU count per type (log-log SVG), and the table. */
export function renderPlanHtml(r: PlanReport): string {
  const W = 720;
  const H = 420;
  const pad = { l: 70, r: 160, t: 20, b: 50 };
  const rows = r.rows.filter((x) => Number.isFinite(x.time_s) && x.time_s > 0);
  const gpus = rows.map((x) => x.gpus);
  const times = rows.map((x) => x.time_s);
  const lx = (v: number): number => Math.log10(v);
  const [x0, x1] = [lx(Math.min(...gpus, 1)), lx(Math.max(...gpus, 2))];
  const [y0, y1] = [Math.floor(lx(Math.min(...times, 1))), Math.ceil(lx(Math.max(...times, 10)))];
  const X = (g: number): number => pad.l + ((lx(g) - x0) / (x1 - x0 || 1)) * (W - pad.l - pad.r);
  const Y = (t: number): number => H - pad.b - ((lx(t) - y0) / (y1 - y0 || 1)) * (H - pad.t - pad.b);
  const svg: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
  ];
  svg.push(
    `<line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" stroke="#333"/>` +
      `<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${H - pad.b}" stroke="#333"/>`,
  );
  for (const g of [...new Set(gpus)])
    svg.push(`<text x="${X(g)}" y="${H - pad.b + 16}" text-anchor="middle">${g}</text>`);
  for (let e = y0; e <= y1; e++)
    svg.push(
      `<text x="${pad.l - 6}" y="${Y(10 ** e) + 4}" text-anchor="end">${fmtDuration(10 ** e)}` +
        `</text><line x1="${pad.l}" y1="${Y(10 ** e)}" x2="${W - pad.r}" y2="${Y(10 ** e)}" ` +
        `stroke="#eee"/>`,
    );
  svg.push(
    `<text x="${(pad.l + W - pad.r) / 2}" y="${H - 12}" text-anchor="middle">GPUs (log)</text>` +
      `<text x="14" y="${(H - pad.b + pad.t) / 2}" transform="rotate(-90 14 ` +
      `${(H - pad.b + pad.t) / 2})" text-anchor="middle">time to target (log)</text>`,
  );
  [...new Set(rows.map((x) => x.gpu_type))].forEach((type, i) => {
    const color = COLORS[i % COLORS.length]!;
    const mine = rows.filter((x) => x.gpu_type === type).sort((a, b) => a.gpus - b.gpus);
    svg.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="` +
        `${mine.map((x) => `${X(x.gpus).toFixed(1)},${Y(x.time_s).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const x of mine) {
      const title =
        `${type} x ${x.gpus}: ${fmtDuration(x.time_s)} (80%: ${fmtTimeRange(x.time_interval_s)}), ` +
        `${fmtCost(x.cost, r.currency)} (${x.source})`;
      svg.push(
        `<circle cx="${X(x.gpus).toFixed(1)}" cy="${Y(x.time_s).toFixed(1)}" r="` +
          `${x.source === 'measured' ? 4 : 2.5}" fill="${x.source === 'measured' ? color : 'white'}" ` +
          `stroke="${color}"><title>` +
          `${escapeHtml(title)}` +
          `</title></circle>`,
      );
    }
    svg.push(`<text x="${W - pad.r + 10}" y="${pad.t + 16 * i + 10}" fill="${color}">${escapeHtml(type)}</text>`);
  });
  svg.push('</svg>');
  const text = escapeHtml(renderPlan(r));
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>goodput plan: ${escapeHtml(r.key)}</title>
<style>body{font-family:sans-serif;margin:2em;color:#222}pre{font-size:12px;background:#f7f7f7;padding:1em;overflow:auto}</style></head>
<body><h1>goodput plan: ${escapeHtml(r.key)}</h1>
<p>Predicted time to ${r.target_samples} samples per GPU count and type (filled dots: measured shapes; open: transferred or estimated).</p>
${svg.join('\n')}
<pre>${text}</pre>
<script type="application/json" id="plan">${JSON.stringify(r).replace(/</g, '\\u003c')}</script>
</body></html>
`;
}
