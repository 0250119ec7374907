import { inputError } from '../core/errors.js';

/** One data row of a CSV file with its 1-based line number (for error messages). */
export interface CsvRow {
  line: number;
  cells: readonly string[];
}

/** A parsed CSV table: the header and the data rows, blank lines skipped. */
export interface CsvTable {
  file: string;
  header: readonly string[];
  rows: readonly CsvRow[];
  /** Index of each named column in `header`. */
  column(name: string): number;
}

/**
 * Parses a simple comma-separated file (no quoting: the trace and workload files never quote).
 * Every `required` column must be present in the header, else an E_INPUT error naming the file
 * and line 1; a row with the wrong number of cells is an error naming its line.
 */
export function parseCsv(text: string, file: string, required: readonly string[] = []): CsvTable {
  const lines = text.split(/\r?\n/);
  let headerLine = 0;
  while (headerLine < lines.length && lines[headerLine]!.trim() === '') headerLine++;
  if (headerLine >= lines.length) throw inputError(file, undefined, 'the file is empty; expected a header line');
  const header = lines[headerLine]!.split(',').map((h) => h.trim());
  for (const name of required) {
    if (!header.includes(name)) {
      throw inputError(file, headerLine + 1, `missing column '${name}' (header is '${printable(header.join(','))}'; expected columns ${required.join(',')})`);
    }
  }
  const rows: CsvRow[] = [];
  for (let i = headerLine + 1; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const cells = raw.split(',').map((c) => c.trim());
    if (cells.length !== header.length) {
      throw inputError(file, i + 1, `expected ${header.length} comma-separated values (${header.join(',')}), got ${cells.length}`);
    }
    rows.push({ line: i + 1, cells });
  }
  const index = new Map(header.map((h, i) => [h, i]));
  return {
    file,
    header,
    rows,
    column(name: string): number {
      const at = index.get(name);
      if (at === undefined) throw inputError(file, 1, `missing column '${name}'`);
      return at;
    },
  };
}

/** Parses one numeric cell; garbage is an E_INPUT error naming file, line and column. */
export function numberCell(table: CsvTable, row: CsvRow, column: string, opts: { integer?: boolean; min?: number } = {}): number {
  const text = row.cells[table.column(column)] ?? '';
  const value = Number(text);
  if (text === '' || !Number.isFinite(value)) {
    throw inputError(table.file, row.line, `column '${column}': '${text}' is not a number`);
  }
  if (opts.integer && !Number.isInteger(value)) {
    throw inputError(table.file, row.line, `column '${column}': '${text}' is not an integer`);
  }
  if (opts.min !== undefined && value < opts.min) {
    throw inputError(table.file, row.line, `column '${column}': ${text} is below the minimum ${opts.min}`);
  }
  return value;
}

/**
 * `text` as it may be echoed in an error: at most `max` characters, control and invalid
 * characters as '?'. A binary file passed by mistake must not fill the terminal with its bytes or
 * send escape sequences to it.
 */
export function printable(text: string, max = 120): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}... (${clean.length} characters)` : clean;
}
