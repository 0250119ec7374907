/**
 * Reader of throughput traces in the Sia artifact's format (a directory of applications, each
 * with `placements-<type>.csv` and optionally `scalability-<type>.csv` per GPU type). Columns are
 * found by header name, in any order; a malformed file is an E_INPUT error naming file and line.
 * The product reads any directory in this format given by path (docs/planner.md).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputError, inputError } from '../core/errors.js';
import type { TypeMeasurement } from '../goodput/type-measurement.js';
import { numberCell, parseCsv, type CsvRow, type CsvTable } from './csv.js';

/** One application's measurements, per GPU type (the type names come from the file names). */
export interface SiaApplication {
  name: string;
  /** Measurements per GPU type: the placements file's rows, then the scalability file's new ones. */
  byType: ReadonlyMap<string, readonly TypeMeasurement[]>;
}

/** Every application of a trace directory, sorted by name; `types` is the sorted union of their types. */
export interface SiaTraces {
  dir: string;
  applications: readonly SiaApplication[];
  types: readonly string[];
}

const PLACEMENTS = /^placements-(.+)\.csv$/;
const TIMES = ['local_bsz', 'step_time', 'sync_time'] as const;

/**
 * Reads the trace directory `dir`: every subdirectory with at least one `placements-<type>.csv`
 * is an application. Files without a type suffix (`placements.csv`, a copy of one type's file in
 * the artifact) and `validation-*.csv` are ignored. Throws E_NOT_FOUND when `dir` is not a
 * directory, E_INPUT when it holds no application or a file is malformed.
 */
export function readSiaTraces(dir: string): SiaTraces {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new GoodputError(
      'E_NOT_FOUND',
      `${dir}: no such trace directory (expected <app>/placements-<type>.csv files, as in the Sia artifact)`,
    );
  }
  const applications: SiaApplication[] = [];
  const types = new Set<string>();
  for (const name of readdirSync(dir).sort()) {
    const appDir = join(dir, name);
    if (!statSync(appDir).isDirectory()) continue;
    const byType = new Map<string, TypeMeasurement[]>();
    for (const file of readdirSync(appDir).sort()) {
      const type = PLACEMENTS.exec(file)?.[1];
      if (type === undefined) continue;
      const rows = parsePlacements(readFileSync(join(appDir, file), 'utf8'), join(appDir, file));
      const scalabilityFile = join(appDir, `scalability-${type}.csv`);
      if (existsSync(scalabilityFile))
        rows.push(...withoutRepeats(rows, parseScalability(readFileSync(scalabilityFile, 'utf8'), scalabilityFile)));
      byType.set(type, rows);
      types.add(type);
    }
    if (byType.size > 0) applications.push({ name, byType });
  }
  if (applications.length === 0) {
    throw inputError(
      dir,
      undefined,
      'no application found (expected <app>/placements-<type>.csv files, as in the Sia artifact)',
    );
  }
  return { dir, applications, types: [...types].sort() };
}

/**
 * Rows of a `placements-<type>.csv` file (columns local_bsz, step_time, sync_time, placement in
 * any order; extra columns ignored). `placement` has one digit per node, that node's GPU count.
 */
export function parsePlacements(text: string, file: string): TypeMeasurement[] {
  const table = parseCsv(text, file, [...TIMES, 'placement']);
  return table.rows.map((row) => {
    const placement = parsePlacement(table, row);
    return {
      placement,
      num_nodes: placement.length,
      num_replicas: placement.reduce((s, g) => s + g, 0),
      ...times(table, row),
    };
  });
}

/** Rows of a `scalability-<type>.csv` file (columns local_bsz, step_time, sync_time, num_nodes, num_replicas in any order). */
export function parseScalability(text: string, file: string): TypeMeasurement[] {
  const table = parseCsv(text, file, [...TIMES, 'num_nodes', 'num_replicas']);
  return table.rows.map((row) => {
    const num_nodes = numberCell(table, row, 'num_nodes', { integer: true, min: 1 });
    const num_replicas = numberCell(table, row, 'num_replicas', { integer: true, min: num_nodes });
    return { num_nodes, num_replicas, ...times(table, row) };
  });
}

function parsePlacement(table: CsvTable, row: CsvRow): number[] {
  const text = row.cells[table.column('placement')] ?? '';
  if (!/^[1-9]+$/.test(text)) {
    throw inputError(
      table.file,
      row.line,
      `column 'placement': '${text}' is not a placement (one digit 1-9 per node, e.g. 44 = 2 nodes x 4 GPUs)`,
    );
  }
  return [...text].map(Number);
}

function times(table: CsvTable, row: CsvRow): Pick<TypeMeasurement, 'local_bsz' | 'step_time_s' | 'sync_time_s'> {
  const local_bsz = numberCell(table, row, 'local_bsz', { integer: true, min: 1 });
  const step_time_s = numberCell(table, row, 'step_time', { min: 0 });
  const sync_time_s = numberCell(table, row, 'sync_time', { min: 0 });
  if (step_time_s <= 0)
    throw inputError(table.file, row.line, `column 'step_time': ${step_time_s} is not a positive time`);
  return { local_bsz, step_time_s, sync_time_s };
}

/**
 * The scalability rows that are not already placement rows: some types' scalability files are
 * their placements files with the placement replaced by its counts (same batch and times), and a
 * measurement must count once.
 */
function withoutRepeats(
  placements: readonly TypeMeasurement[],
  scalability: readonly TypeMeasurement[],
): TypeMeasurement[] {
  const seen = new Set(placements.map(measurementKey));
  return scalability.filter((m) => !seen.has(measurementKey(m)));
}

function measurementKey(m: TypeMeasurement): string {
  return `${m.num_nodes}/${m.num_replicas}/${m.local_bsz}/${m.step_time_s}/${m.sync_time_s}`;
}
