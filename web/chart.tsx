/** A uPlot line chart (canvas: fast with many points) that follows its container's width. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** Draw as steps (counts and configurations change in steps). */
  stepped?: boolean;
}

export interface ChartProps {
  title: string;
  /** X values, ascending: seconds (unix time when `time`), else plain numbers. */
  x: number[];
  series: ChartSeries[];
  time?: boolean;
  xLabel?: string;
  height?: number;
  /** Logarithmic y axis (series of very different sizes, e.g. batch sizes and accumulation steps). */
  log?: boolean;
}

const stepped = uPlot.paths.stepped?.({ align: 1 });

/** `data-points` on the wrapper holds the number of x values drawn (read by the browser tests). */
export function Chart(p: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = `${p.series.map((s) => s.label).join('|')}|${p.time ? 't' : 'n'}|${p.log ? 'log' : ''}`;
  const data = [p.x, ...p.series.map((s) => s.values)] as uPlot.AlignedData;

  useEffect(() => {
    const el = box.current!;
    const opts: uPlot.Options = {
      title: p.title,
      width: Math.max(200, el.clientWidth),
      height: p.height ?? 180,
      scales: { x: { time: p.time ?? false }, ...(p.log ? { y: { distr: 3, log: 2 } } : {}) },
      axes: [{ label: p.xLabel }, { size: 60 }],
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      series: [{}, ...p.series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5, spanGaps: true, points: { show: false }, ...(s.stepped && stepped ? { paths: stepped } : {}) }))],
    };
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: p.height ?? 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data);
  });

  return <div class="chart" ref={box} data-points={p.x.length} data-title={p.title} />;
}
