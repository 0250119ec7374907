/** Number and time formatting shared by the pages. */

export function fmtNumber(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  if (a >= 1e6) return `${(x / 1e6).toPrecision(digits)}M`;
  if (a >= 1e4) return `${(x / 1e3).toPrecision(digits)}k`;
  if (a >= 100 || Number.isInteger(x)) return String(Math.round(x));
  return x.toPrecision(digits);
}

export function fmtPercent(x: number | null | undefined): string {
  return x === null || x === undefined ? '–' : `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%`;
}

export function fmtDuration(s: number): string {
  if (!Number.isFinite(s)) return '–';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

/** Local clock time (HH:MM:SS), with the date when not today. */
export function fmtTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  const d = new Date(ms);
  const time = d.toLocaleTimeString([], { hour12: false });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}
