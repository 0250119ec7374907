/**
 * An allocation timeline on a canvas: one row per device (beyond MAX_LINES devices, consecutive
 * devices share a line), each job a colored band over time. Hovering names the job; clicking a
 * visible job opens its page.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Timeline } from '../src/dashboard/types.js';
import { jobColorMap } from '../src/dashboard/colors.js';
import { fmtDuration } from './format.js';

export interface TimelineProps {
  timeline: Timeline;
  /** Time axis as hours since the start (simulations) instead of clock time. */
  relative?: boolean;
  onOpen?: (job_id: string) => void;
  maxHeight?: number;
}

const AXIS_H = 18;
/**
 * Most lines drawn: beyond it, consecutive devices share a line (a 16,384-device cluster would
 * otherwise need a canvas taller than chromium draws, 32,768 px at 2 px a row).
 */
const MAX_LINES = 1024;

export function TimelineView(p: TimelineProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(800);
  const [hover, setHover] = useState<{ x: number; y: number; text: string } | null>(null);
  const t = p.timeline;
  const LABEL_W = useMemo(() => 12 + 6.5 * t.rows.reduce((m, r) => Math.max(m, r.length), 4), [t.rows]);
  // Rows of a line: 1 up to MAX_LINES rows, then as many as keep the lines within it.
  const perLine = Math.max(1, Math.ceil(t.rows.length / MAX_LINES));
  const lines = Math.ceil(t.rows.length / perLine);
  const rowH = Math.max(2, Math.min(16, Math.floor((p.maxHeight ?? 520) / Math.max(1, lines))));
  const height = lines * rowH + AXIS_H;
  const byLine = useMemo(() => {
    const out: number[][] = Array.from({ length: lines }, () => []);
    for (let i = 0; i < t.row.length; i++) out[Math.floor(t.row[i]! / perLine)]?.push(i);
    return out;
  }, [t, lines, perLine]);

  useEffect(() => {
    const el = canvas.current!;
    const resize = new ResizeObserver(() => setWidth(el.parentElement!.clientWidth));
    resize.observe(el.parentElement!);
    return () => resize.disconnect();
  }, []);

  const span = Math.max(1, t.to_ms - t.from_ms);
  const plotW = Math.max(10, width - LABEL_W);
  const xOf = (ms: number) => LABEL_W + ((ms - t.from_ms) / span) * plotW;

  useEffect(() => {
    const el = canvas.current!;
    const dpr = window.devicePixelRatio || 1;
    el.width = width * dpr;
    el.height = height * dpr;
    el.style.width = `${width}px`;
    el.style.height = `${height}px`;
    const g = el.getContext('2d')!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    g.fillStyle = '#f6f7f9';
    g.fillRect(LABEL_W, 0, plotW, lines * rowH);
    const color = jobColorMap(t.ids);
    const colors = t.labels.map((_label, j) => color(t.ids[j] ?? ''));
    for (let i = 0; i < t.row.length; i++) {
      const x0 = xOf(Math.max(t.start_ms[i]!, t.from_ms));
      const x1 = xOf(Math.min(t.end_ms[i]!, t.to_ms));
      g.fillStyle = colors[t.job[i]!]!;
      const y0 = Math.floor(t.row[i]! / perLine) * rowH;
      g.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, rowH - (rowH > 4 ? 1 : 0)));
    }
    g.fillStyle = '#333';
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    const every = Math.max(1, Math.ceil(12 / rowH));
    for (let l = 0; l < lines; l += every) g.fillText(t.rows[l * perLine]!, 2, l * rowH + Math.max(rowH, 10) / 2);
    const y = lines * rowH;
    g.strokeStyle = '#999';
    g.beginPath();
    g.moveTo(LABEL_W, y + 0.5);
    g.lineTo(width, y + 0.5);
    g.stroke();
    g.textBaseline = 'top';
    const ticks = 6;
    for (let k = 0; k <= ticks; k++) {
      const ms = t.from_ms + (span * k) / ticks;
      const clock: Intl.DateTimeFormatOptions =
        span < 900_000
          ? { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }
          : { hour: '2-digit', minute: '2-digit', hour12: false };
      const label = p.relative ? `${(ms / 3_600_000).toFixed(1)} h` : new Date(ms).toLocaleTimeString([], clock);
      const x = xOf(ms);
      g.fillText(label, Math.min(Math.max(LABEL_W, x - 15), width - 52), y + 3);
    }
  }, [t, width, height, rowH, lines, perLine]);

  const bandAt = (x: number, y: number): number | undefined => {
    const l = Math.floor(y / rowH);
    if (l < 0 || l >= lines || x < LABEL_W) return undefined;
    const ms = t.from_ms + ((x - LABEL_W) / plotW) * span;
    return byLine[l]!.find((i) => t.start_ms[i]! <= ms && ms <= t.end_ms[i]!);
  };
  const describe = (i: number) => {
    const j = t.job[i]!;
    const name = t.labels[j] === '' ? "another user's job" : t.labels[j]!;
    return `${name} on ${t.rows[t.row[i]!]} for ${fmtDuration((t.end_ms[i]! - t.start_ms[i]!) / 1000)}`;
  };

  return (
    <div class="timeline">
      <canvas
        ref={canvas}
        data-bands={t.row.length}
        data-rows={t.rows.length}
        data-lines={lines}
        onMouseMove={(e) => {
          const i = bandAt(e.offsetX, e.offsetY);
          setHover(i === undefined ? null : { x: e.offsetX, y: e.offsetY, text: describe(i) });
        }}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          const i = bandAt(e.offsetX, e.offsetY);
          const id = i === undefined ? '' : t.ids[t.job[i]!]!;
          if (id && p.onOpen) p.onOpen(id);
        }}
      />
      {hover && (
        <div class="tip" style={{ left: `${hover.x + 12}px`, top: `${hover.y + 8}px` }}>
          {hover.text}
        </div>
      )}
    </div>
  );
}
