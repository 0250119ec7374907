import { CAUSE_TEXT } from '../findings/attribution-findings.js';
import type { Finding } from '../findings/finding.js';
import { BOTTLENECK_COLOR, CAUSE_COLOR, IDLE_COLOR, SERIES_COLORS as COLORS } from './colors.js';
import type { DoctorReport } from './model.js';
import { BOTTLENECK_TEXT } from './model.js';

/** Escapes text for HTML element content and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round tick values for an axis from 0 to `span`. */
function ticks(span: number): number[] {
  if (!(span > 0)) return [0];
  const step0 = span / 5;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= step0)!;
  const out: number[] = [];
  for (let v = 0; v <= span + 1e-9; v += step) out.push(Number(v.toPrecision(6)));
  return out;
}

/** An x axis with ticks: `xOf` maps a value to pixels. */
function xAxis(span: number, xOf: (v: number) => number, y: number, unit: string): string {
  return ticks(span)
    .map(
      (v) =>
        `<line x1="${xOf(v).toFixed(1)}" x2="${xOf(v).toFixed(1)}" y1="${y}" y2="${y + 4}" ` +
        `class="grid"/><text x="${xOf(v).toFixed(1)}" y="${y + 15}" text-anchor="middle">${v}` +
        `${unit}</text>`,
    )
    .join('');
}

/**
 * Line chart of GPU utilization (%) over time, one line per GPU: seconds from the samples'
 * timestamps (query-gpu CSV, exporter scrapes); samples without timestamps (dmon, -q, single
 * snapshots) are placed 1 s apart, nvidia-smi's default interval, and the axis says so.
 */
function utilizationChart(r: DoctorReport): string {
  const series = r.gpus.filter((g) => g.utilization_series_pct.length > 0);
  if (series.length === 0) return '<p class="none">No nvidia-smi utilization samples in the inputs.</p>';
  const w = 720,
    h = 240,
    pad = 40;
  const times = series.map((g) => g.utilization_series_t_s ?? g.utilization_series_pct.map((_, i) => i));
  const assumed = series.some((g) => g.utilization_series_t_s === null);
  const span = Math.max(...times.map((t) => t[t.length - 1] ?? 0), 1e-9);
  const xOf = (v: number) => pad + (v * (w - 2 * pad)) / span;
  const y = (v: number) => h - pad - (v * (h - 2 * pad)) / 100;
  const grid = [0, 25, 50, 75, 100]
    .map(
      (v) =>
        `<line x1="${pad}" x2="${w - pad}" y1="${y(v)}" y2="${y(v)}" class="grid"/><text x="4" y="${y(v) + 4}">${v}%</text>`,
    )
    .join('');
  const lines = series
    .map((g, k) => {
      const pts = g.utilization_series_pct
        .map((v, i) => `${xOf(times[k]![i]!).toFixed(1)},${y(v).toFixed(1)}`)
        .join(' ');
      const dots = g.utilization_series_pct
        .map(
          (v, i) =>
            `<circle cx="${xOf(times[k]![i]!).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" fill="` +
            `${COLORS[k % COLORS.length]}"><title>${v}% at ${times[k]![i]!.toFixed(1)} s</title>` +
            `</circle>`,
        )
        .join('');
      return `<polyline fill="none" stroke="${COLORS[k % COLORS.length]}" stroke-width="2" points="${pts}"/>${dots}`;
    })
    .join('');
  const legend = series
    .map(
      (g, k) =>
        `<span style="color:${COLORS[k % COLORS.length]}">&#9632;</span> ` +
        `${esc(`${g.name ?? 'GPU'} #${g.index ?? '?'} (${g.source})`)}` +
        `${g.utilization_series_t_s === null ? ' <span class="none">(no timestamps: 1 s apart)</span>' : ''}`,
    )
    .join('<br>');
  const caption = `time (s)${assumed ? "; samples without timestamps placed 1 s apart (nvidia-smi's default interval)" : ''}`;
  return (
    `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="GPU utilization over time" ` +
    `data-x-axis="time">${grid}${lines}${xAxis(span, xOf, h - pad, ' s')}<text x="${w / 2}" y="` +
    `${h - 4}" text-anchor="middle">${esc(caption)}</text></svg><p class="legend">${legend}</p>`
  );
}

/**
 * Where the time goes, one bar per rank (GPU time or step time) on a time axis in ms, split by
 * cause in the report's cause colours; each bar is the evidence target of that rank's findings.
 */
function attributionChart(r: DoctorReport): string {
  const ranks = r.traces.filter((t) => t.attribution);
  if (ranks.length === 0) return '<p class="none">No PyTorch traces in the inputs.</p>';
  const w = 720,
    bar = 22,
    gap = 12,
    left = 170,
    right = 20,
    top = 8;
  const h = top + ranks.length * (bar + gap) + 30;
  const span = Math.max(...ranks.map((t) => t.attribution!.total_us / 1000), 1e-9);
  const xOf = (ms: number) => left + (ms * (w - left - right)) / span;
  const rows = ranks
    .map((t, i) => {
      const a = t.attribution!;
      const y0 = top + i * (bar + gap);
      let x = 0;
      const rects = a.causes
        .filter((c) => c.time_us > 0)
        .map((c) => {
          const width = c.time_us / 1000;
          const rect =
            `<rect x="${xOf(x).toFixed(1)}" y="${y0}" width="` +
            `${Math.max(0, xOf(width) - left).toFixed(1)}" height="${bar}" fill="` +
            `${CAUSE_COLOR[c.cause]}"><title>${esc(CAUSE_TEXT[c.cause])}: ${c.pct.toFixed(2)}% (` +
            `${(c.time_us / 1000).toFixed(1)} ms)</title></rect>`;
          x += width;
          return rect;
        })
        .join('');
      return (
        `<g id="${traceAnchor(r, t.file, t.rank)}"><text x="4" y="${y0 + 15}">rank ${t.rank} (` +
        `${esc(t.file.split('/').pop() ?? '')}) ${a.basis === 'gpu-time' ? 'GPU' : 'steps'}</text>` +
        `${rects}</g>`
      );
    })
    .join('');
  const legend = (Object.keys(CAUSE_COLOR) as (keyof typeof CAUSE_COLOR)[])
    .map((c) => `<span style="color:${CAUSE_COLOR[c]}">&#9632;</span> ${esc(CAUSE_TEXT[c])}`)
    .join(' &nbsp; ');
  return (
    `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="Time by cause per rank" ` +
    `data-x-axis="time">${rows}${xAxis(span, xOf, h - 26, ' ms')}<text x="` +
    `${(left + w - right) / 2}" y="${h - 2}" text-anchor="middle">time (ms): GPU time of GPU ` +
    `traces, the analysed steps of CPU traces</text></svg><p class="legend">${legend}</p>`
  );
}

/** Anchor of a rank's bar in the time-by-cause chart. */
function traceAnchor(r: DoctorReport, file: string, rank: number): string {
  return `ev-trace-${r.traces.findIndex((t) => t.file === file && t.rank === rank)}`;
}

/** Where a finding's evidence is shown: its rank's bar, the utilization chart, the step table, or its input. */
function evidenceAnchor(r: DoctorReport, f: Finding): string {
  const trace = r.traces.find((t) => t.file === f.source && t.attribution);
  if (trace) return `#${traceAnchor(r, trace.file, trace.rank)}`;
  if (f.id.startsWith('smi.') && r.gpus.some((g) => g.utilization_series_pct.length > 0)) return '#ev-gpu-utilization';
  if (f.id.startsWith('steps.') && r.steps.length > 0) return '#ev-steps';
  const i = r.inputs.findIndex((x) => x.path === f.source);
  return i >= 0 ? `#ev-input-${i}` : '#ev-inputs';
}

/** The SDK step breakdowns per rank, as a table (seconds per step and shares). */
function stepsTable(r: DoctorReport): string {
  if (r.steps.length === 0) return '<p class="none">No step breakdowns in the inputs.</p>';
  const cell = (v: number, total: number, c: keyof typeof CAUSE_COLOR) =>
    `<td><span style="color:${CAUSE_COLOR[c]}">&#9632;</span> ${(1000 * v).toFixed(1)} ms (${((100 * v) / total).toFixed(1)}%)</td>`;
  const row = (s: DoctorReport['steps'][number]) =>
    `<tr><td>${s.rank}</td><td>${s.steps}</td><td>${(1000 * s.step_time_s).toFixed(1)} ms</td>` +
    cell(s.data_wait_s, s.step_time_s, 'input-pipeline') +
    cell(s.forward_backward_s, s.step_time_s, 'compute') +
    cell(s.sync_s, s.step_time_s, 'collectives') +
    cell(s.optimizer_s, s.step_time_s, 'host-overhead') +
    (s.measures_between_steps ? cell(s.between_steps_s, s.step_time_s, 'sync-points') : '<td>not measured</td>') +
    `</tr>`;
  return (
    `<table id="ev-steps"><tr><th>rank</th><th>steps</th><th>step</th><th>data wait</th>` +
    `<th>forward+backward</th><th>sync</th><th>optimizer</th><th>between steps</th></tr>` +
    `${r.steps.map(row).join('')}` +
    `</table>`
  );
}

/** Stacked bars: idle / compute / non-compute share per rank (HTA temporal breakdown). */
function temporalChart(r: DoctorReport): string {
  const ranks = r.traces.filter((t) => t.temporal);
  if (ranks.length === 0) return '<p class="none">No PyTorch traces with GPU activity in the inputs.</p>';
  const w = 720,
    bar = 22,
    gap = 10,
    left = 150,
    right = 20;
  const h = ranks.length * (bar + gap) + 40;
  const scale = (w - left - right) / 100;
  const parts = [
    ['idle', IDLE_COLOR],
    ['compute', CAUSE_COLOR.compute],
    ['non-compute', CAUSE_COLOR.collectives],
  ] as const;
  const rows = ranks
    .map((t, i) => {
      const tb = t.temporal!;
      const vals = [tb.idle_pct, tb.compute_pct, tb.non_compute_pct];
      let xPos = left;
      const y = 10 + i * (bar + gap);
      const rects = vals
        .map((v, k) => {
          const rect =
            `<rect x="${xPos.toFixed(1)}" y="${y}" width="${Math.max(0, v * scale).toFixed(1)}" ` +
            `height="${bar}" fill="${parts[k]![1]}"><title>${parts[k]![0]}: ${v}%</title></rect>`;
          xPos += Math.max(0, v * scale);
          return rect;
        })
        .join('');
      return `<text x="4" y="${y + 15}">rank ${t.rank} (${esc(t.file.split('/').pop() ?? '')})</text>${rects}`;
    })
    .join('');
  const legend = parts.map(([name, c]) => `<span style="color:${c}">&#9632;</span> ${name}`).join(' &nbsp; ');
  return `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="Time breakdown per rank">${rows}</svg><p class="legend">${legend}</p>`;
}

/** Horizontal bars of the kernel-type breakdown, one chart per run. */
function kernelTypeChart(r: DoctorReport): string {
  if (r.kernel_types.length === 0) return '<p class="none">No GPU kernels in the inputs.</p>';
  return r.kernel_types
    .map((run) => `<h3>${esc(run.run)} (ranks ${run.ranks.join(', ')})</h3>${kernelTypeBars(run.rows)}`)
    .join('\n');
}

function kernelTypeBars(kernelTypes: DoctorReport['kernel_types'][number]['rows']): string {
  const w = 720,
    bar = 18,
    gap = 8,
    left = 400;
  const h = kernelTypes.length * (bar + gap) + 20;
  const max = Math.max(...kernelTypes.map((k) => k.pct), 1);
  const rows = kernelTypes
    .map((k, i) => {
      const y = 10 + i * (bar + gap);
      const width = ((w - left - 60) * k.pct) / max;
      return (
        `<text x="4" y="${y + 13}">${esc(k.kernel_type)}</text><rect x="${left}" y="${y}" width="` +
        `${width.toFixed(1)}" height="${bar}" fill="${COLORS[i % COLORS.length]}"><title>` +
        `${k.time_us} µs</title></rect><text x="${(left + width + 6).toFixed(1)}" y="${y + 13}">` +
        `${k.pct.toFixed(1)}%</text>`
      );
    })
    .join('');
  return `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="Kernel type breakdown">${rows}</svg>`;
}

/**
 * One self-contained page (inline CSS and SVG, no scripts, no network): verdict, the charts (time
 * axes, one colour per cause throughout) and the ranked findings, each linking to its evidence. Pure.
 */
export function renderHtml(r: DoctorReport): string {
  const findings = r.findings
    .map(
      (f, n) =>
        `<section class="finding ${f.severity}" id="finding-${n + 1}" style="border-color:${BOTTLENECK_COLOR[f.bottleneck]}"><h3>${n + 1}. ` +
        `${esc(f.title)}</h3>
<p class="meta">${f.severity} &middot; <span style="color:${BOTTLENECK_COLOR[f.bottleneck]}">&#9632;</span> ` +
        `${esc(BOTTLENECK_TEXT[f.bottleneck])} &middot; est. impact ${f.impact_pct.toFixed(1)}% &middot; <code>${esc(f.id)}</code> ` +
        `&middot; ${esc(f.source)} &middot; <a class="evidence-link" href="${evidenceAnchor(r, f)}">see the evidence</a></p>
<h4>Evidence</h4><ul>${f.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>
<h4>Fix</h4><ul>${f.fix.map((x) => `<li><code>${esc(x)}</code></li>`).join('')}</ul></section>`,
    )
    .join('\n');
  const inputs = `<ul id="ev-inputs">${r.inputs.map((i, k) => `<li id="ev-input-${k}">${esc(i.path)} (${i.kind})</li>`).join('')}</ul>`;
  const warnings = r.warnings.length
    ? `<h2>Warnings</h2><ul>${r.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`
    : '';
  return (
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>goodput doctor report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222;padding:0 1em}
svg{width:100%;height:auto;font-size:11px;background:#fafafa;border:1px solid #ddd}
.grid{stroke:#ddd}.legend{font-size:12px}.none{color:#777}
.finding{border-left:5px solid #999;padding:.2em 1em;margin:1em 0;background:#f8f8f8}
.finding.critical{border-color:#c0392b}.finding.warning{border-color:#e67e22}.finding.info{border-color:#2980b9}
.meta{color:#555;font-size:12px}code{font-size:12px;white-space:pre-wrap}h4{margin:.5em 0 .2em}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
</style></head><body>
<h1>goodput doctor</h1>
<p><strong>Limiting resource: <span style="color:${BOTTLENECK_COLOR[r.verdict]}">&#9632;</span> ${esc(BOTTLENECK_TEXT[r.verdict])}` +
    `</strong>. ${r.inputs.length} input(s):</p>${inputs}
<h2>Where the time goes (per rank, adds up to 100%)</h2>${attributionChart(r)}
<h2 id="ev-gpu-utilization">GPU utilization over time</h2>${utilizationChart(r)}
<h2>Time breakdown per rank (HTA)</h2>${temporalChart(r)}
<h2>Step breakdowns (SDK)</h2>${stepsTable(r)}
<h2>Kernel type breakdown</h2>${kernelTypeChart(r)}
<h2>Findings (ranked by estimated impact)</h2>
${findings || '<p class="none">No findings.</p>'}
${warnings}
</body></html>
`
  );
}
