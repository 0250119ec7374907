/** Plain-text tables for the CLI. */
import { terminalText } from '../util/printable.js';

/**
 * Left-aligned columns separated by two spaces; the header is upper-cased. Every cell is shown
 * with its control characters escaped (util/printable.ts terminalText): cells carry job names,
 * reasons and events, and a table is printed to a terminal. Pure.
 */
export function formatTable(header: readonly string[], unsafe: readonly (readonly string[])[]): string {
  const rows = unsafe.map((r) => r.map((c) => terminalText(c)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n');
}

/** "3m ago"-style age of an ISO time relative to `now_ms`. */
export function age(iso: string | null, now_ms = Date.now()): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.round((now_ms - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}
