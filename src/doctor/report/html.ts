import type { DoctorReport } from './model.js';
import { BOTTLENECK_TEXT } from './model.js';

/** Escapes text for HTML element content and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7'];

/** Line chart of GPU utilization (%) per sample, one line per GPU. */
function utilizationChart(r: DoctorReport): string {
  const series = r.gpus.filter((g) => g.utilization_series_pct.length > 0);
  if (series.length === 0) return '<p class="none">No nvidia-smi utilization samples in the inputs.</p>';
  const w = 720, h = 220, pad = 36;
  // Real time on the x axis when every series is timestamped (query-gpu CSV with timestamp), else sample order.
  const timed = series.every((g) => g.utilization_series_t_s !== null);
  const n = Math.max(...series.map((g) => g.utilization_series_pct.length));
  const span = timed ? Math.max(...series.map((g) => g.utilization_series_t_s![g.utilization_series_t_s!.length - 1]!), 1e-9) : n - 1;
  const seriesX = (g: (typeof series)[number], i: number) => (timed ? g.utilization_series_t_s![i]! : i);
  const xOf = (v: number) => pad + (span <= 0 ? 0 : (v * (w - 2 * pad)) / span);
  const y = (v: number) => h - pad - (v * (h - 2 * pad)) / 100;
  const grid = [0, 25, 50, 75, 100].map((v) => `<line x1="${pad}" x2="${w - pad}" y1="${y(v)}" y2="${y(v)}" class="grid"/><text x="4" y="${y(v) + 4}">${v}%</text>`).join('');
  const lines = series.map((g, k) => {
    const pts = g.utilization_series_pct.map((v, i) => `${xOf(seriesX(g, i)).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const dots = g.utilization_series_pct.map((v, i) => `<circle cx="${xOf(seriesX(g, i)).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" fill="${COLORS[k % COLORS.length]}"><title>${v}%</title></circle>`).join('');
    return `<polyline fill="none" stroke="${COLORS[k % COLORS.length]}" stroke-width="2" points="${pts}"/>${dots}`;
  }).join('');
  const legend = series.map((g, k) => `<span style="color:${COLORS[k % COLORS.length]}">&#9632;</span> ${esc(`${g.name ?? 'GPU'} #${g.index ?? '?'} (${g.source})`)}`).join('<br>');
  return `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="GPU utilization over time">${grid}${lines}<text x="${w / 2}" y="${h - 6}" text-anchor="middle">${timed ? `time (s), 0 to ${span.toFixed(1)}` : 'sample (input order)'}</text></svg><p class="legend">${legend}</p>`;
}

/** Stacked bars: idle / compute / non-compute share per rank (HTA temporal breakdown). */
function temporalChart(r: DoctorReport): string {
  const ranks = r.traces.filter((t) => t.temporal);
  if (ranks.length === 0) return '<p class="none">No PyTorch traces with GPU activity in the inputs.</p>';
  const w = 720, bar = 22, gap = 10, left = 150, right = 20;
  const h = ranks.length * (bar + gap) + 40;
  const scale = (w - left - right) / 100;
  const parts = [['idle', '#e15759'], ['compute', '#59a14f'], ['non-compute', '#f28e2b']] as const;
  const rows = ranks.map((t, i) => {
    const tb = t.temporal!;
    const vals = [tb.idle_pct, tb.compute_pct, tb.non_compute_pct];
    let xPos = left;
    const y = 10 + i * (bar + gap);
    const rects = vals.map((v, k) => {
      const rect = `<rect x="${xPos.toFixed(1)}" y="${y}" width="${Math.max(0, v * scale).toFixed(1)}" height="${bar}" fill="${parts[k]![1]}"><title>${parts[k]![0]}: ${v}%</title></rect>`;
      xPos += Math.max(0, v * scale);
      return rect;
    }).join('');
    return `<text x="4" y="${y + 15}">rank ${t.rank} (${esc(t.file.split('/').pop() ?? '')})</text>${rects}`;
  }).join('');
  const legend = parts.map(([name, c]) => `<span style="color:${c}">&#9632;</span> ${name}`).join(' &nbsp; ');
  return `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="Time breakdown per rank">${rows}</svg><p class="legend">${legend}</p>`;
}

/** Horizontal bars of the kernel-type breakdown, one chart per run. */
function kernelTypeChart(r: DoctorReport): string {
  if (r.kernel_types.length === 0) return '<p class="none">No GPU kernels in the inputs.</p>';
  return r.kernel_types.map((run) => `<h3>${esc(run.run)} (ranks ${run.ranks.join(', ')})</h3>${kernelTypeBars(run.rows)}`).join('\n');
}

function kernelTypeBars(kernelTypes: DoctorReport['kernel_types'][number]['rows']): string {
  const w = 720, bar = 18, gap = 8, left = 400;
  const h = kernelTypes.length * (bar + gap) + 20;
  const max = Math.max(...kernelTypes.map((k) => k.pct), 1);
  const rows = kernelTypes.map((k, i) => {
    const y = 10 + i * (bar + gap);
    const width = ((w - left - 60) * k.pct) / max;
    return `<text x="4" y="${y + 13}">${esc(k.kernel_type)}</text><rect x="${left}" y="${y}" width="${width.toFixed(1)}" height="${bar}" fill="${COLORS[i % COLORS.length]}"><title>${k.time_us} µs</title></rect><text x="${(left + width + 6).toFixed(1)}" y="${y + 13}">${k.pct.toFixed(1)}%</text>`;
  }).join('');
  return `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="Kernel type breakdown">${rows}</svg>`;
}

/**
 * One self-contained page (inline CSS and SVG, no scripts, no network): verdict, the three charts
 * and the ranked findings with evidence and fixes. Pure.
 */
export function renderHtml(r: DoctorReport): string {
  const findings = r.findings.map((f) => `<section class="finding ${f.severity}"><h3>${esc(f.title)}</h3>
<p class="meta">${f.severity} &middot; ${esc(BOTTLENECK_TEXT[f.bottleneck])} &middot; est. impact ${f.impact_pct.toFixed(1)}% &middot; <code>${esc(f.id)}</code> &middot; ${esc(f.source)}</p>
<h4>Evidence</h4><ul>${f.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>
<h4>Fix</h4><ul>${f.fix.map((x) => `<li><code>${esc(x)}</code></li>`).join('')}</ul></section>`).join('\n');
  const warnings = r.warnings.length ? `<h2>Warnings</h2><ul>${r.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>goodput doctor report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222;padding:0 1em}
svg{width:100%;height:auto;font-size:11px;background:#fafafa;border:1px solid #ddd}
.grid{stroke:#ddd}.legend{font-size:12px}.none{color:#777}
.finding{border-left:5px solid #999;padding:.2em 1em;margin:1em 0;background:#f8f8f8}
.finding.critical{border-color:#c0392b}.finding.warning{border-color:#e67e22}.finding.info{border-color:#2980b9}
.meta{color:#555;font-size:12px}code{font-size:12px;white-space:pre-wrap}h4{margin:.5em 0 .2em}
</style></head><body>
<h1>goodput doctor</h1>
<p><strong>Limiting resource: ${esc(BOTTLENECK_TEXT[r.verdict])}</strong>. ${r.inputs.length} input(s): ${r.inputs.map((i) => `${esc(i.path)} (${i.kind})`).join(', ')}</p>
<h2>GPU utilization over time</h2>${utilizationChart(r)}
<h2>Time breakdown per rank</h2>${temporalChart(r)}
<h2>Kernel type breakdown</h2>${kernelTypeChart(r)}
<h2>Findings (ranked by estimated impact)</h2>
${findings || '<p class="none">No findings.</p>'}
${warnings}
</body></html>
`;
}
