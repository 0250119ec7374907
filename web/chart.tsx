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
  /** Vertical markers at these x values (decisions: rescales, restarts), drawn dashed. */
  marks?: number[];
  /** Logarithmic x axis and a dot at every value (a few points over sizes 1, 2, 4, ...). */
  logX?: boolean;
  /** Draw lines across null values (default false: a null is a gap, e.g. a job stopped between attempts). */
  spanGaps?: boolean;
}

const stepped = uPlot.paths.stepped?.({ align: 1 });

/** `data-points` on the wrapper holds the number of x values drawn (read by the browser tests). */
export function Chart(p: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const marks = useRef<number[]>([]);
  marks.current = p.marks ?? [];
  const shape = `${p.series.map((s) => s.label).join('|')}|${p.time ? 't' : 'n'}|${p.log ? 'log' : ''}|${p.logX ? 'logx' : ''}`;
  const data = [p.x, ...p.series.map((s) => s.values)] as uPlot.AlignedData;

  useEffect(() => {
    const el = box.current!;
    const opts: uPlot.Options = {
      title: p.title,
      width: Math.max(200, el.clientWidth),
      height: p.height ?? 180,
      scales: {
        x: { time: p.time ?? false, ...(p.logX ? { distr: 3, log: 2 } : {}) },
        ...(p.log ? { y: { distr: 3, log: 2 } } : {}),
      },
      axes: [{ label: p.xLabel }, { size: 60 }],
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [(u) => drawMarks(u, marks.current)] },
      series: [
        {},
        ...p.series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 1.5,
          spanGaps: p.spanGaps ?? false,
          points: { show: p.logX ?? false },
          ...(s.stepped && stepped ? { paths: stepped } : {}),
        })),
      ],
    };
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const resize = new ResizeObserver(() =>
      u.setSize({ width: Math.max(200, el.clientWidth), height: p.height ?? 180 }),
    );
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

  return (
    <div class="chart" ref={box} data-points={p.x.length} data-title={p.title} data-marks={p.marks?.length ?? 0} />
  );
}

function drawMarks(u: uPlot, xs: readonly number[]): void {
  const { ctx, bbox } = u;
  ctx.save();
  ctx.strokeStyle = 'rgba(95, 99, 104, 0.7)';
  ctx.setLineDash([4, 4]);
  ctx.lineWidth = 1;
  for (const x of xs) {
    const px = Math.round(u.valToPos(x, 'x', true));
    if (px < bbox.left || px > bbox.left + bbox.width) continue;
    ctx.beginPath();
    ctx.moveTo(px + 0.5, bbox.top);
    ctx.lineTo(px + 0.5, bbox.top + bbox.height);
    ctx.stroke();
  }
  ctx.restore();
}
