import { CsvError, parse } from 'csv-parse/sync';
import { inputError } from '../core/errors.js';
import { printable } from '../util/printable.js';

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

interface ParsedRecord {
  record: string[];
  info: { lines: number };
}

/**
 * Parses a comma-separated file as users export them (RFC 4180 quoting, a byte-order mark, CRLF
 * or LF line ends, spaces around cells, blank lines). Every `required` column must be present in
 * the header, else an E_INPUT error naming the file and line 1; a row with the wrong number of
 * cells, or broken quoting, is an E_INPUT error naming its line. `line` is where a row ends.
 */
export function parseCsv(text: string, file: string, required: readonly string[] = []): CsvTable {
  let records: ParsedRecord[];
  try {
    records = parse(text, {
      bom: true,
      info: true,
      trim: true,
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_empty_values: true,
      record_delimiter: ['\r\n', '\n', '\r'],
    }) as unknown as ParsedRecord[];
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // A wrong file (binary, another format) is better named by its header than by its quotes.
    const firstLine = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
    checkHeader(
      file,
      1,
      firstLine.split(',').map((h) => h.trim()),
      required,
    );
    const line = typeof error.lines === 'number' ? error.lines : undefined;
    throw inputError(file, line, `not a valid CSV file: ${printable(error.message.replace(/ at line \d+/, ''))}`);
  }
  const [headerRecord, ...dataRecords] = records;
  if (headerRecord === undefined) throw inputError(file, undefined, 'the file is empty; expected a header line');
  const header = headerRecord.record;
  checkHeader(file, headerRecord.info.lines, header, required);
  const rows: CsvRow[] = [];
  for (const { record: cells, info } of dataRecords) {
    if (cells.length !== header.length) {
      throw inputError(
        file,
        info.lines,
        `expected ${header.length} comma-separated values (${header.join(',')}), got ${cells.length}`,
      );
    }
    rows.push({ line: info.lines, cells });
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

function checkHeader(file: string, line: number, header: readonly string[], required: readonly string[]): void {
  for (const name of required) {
    if (!header.includes(name)) {
      throw inputError(
        file,
        line,
        `missing column '${name}' (header is '${printable(header.join(','))}'; expected columns ${required.join(',')})`,
      );
    }
  }
}

/** Parses one numeric cell; garbage is an E_INPUT error naming file, line and column. */
export function numberCell(
  table: CsvTable,
  row: CsvRow,
  column: string,
  opts: { integer?: boolean; min?: number } = {},
): number {
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
