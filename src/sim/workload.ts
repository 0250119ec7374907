import { readFileSync } from 'node:fs';
import { GoodputError, inputError } from '../core/errors.js';
import { Random } from '../core/random.js';
import { packagePath } from '../util/package-root.js';
import { applicationNames, getApplication, type TraceApplication } from './application.js';
import { numberCell, parseCsv } from './csv.js';
import { ownerCells } from './sim-owners.js';

/** One row of a workload file: a job submission with its tuned (gang, batch) configuration. */
export interface WorkloadJob {
  name: string;
  /** Submission time (s since the start of the trace). */
  submit_s: number;
  application: TraceApplication;
  /** Tuned GPU count (Tiresias gang size). */
  num_replicas: number;
  /** Tuned total batch size (fixed-batch policies). */
  batch_size: number;
  /** Line of the workload file, for error messages. */
  line: number;
  /** The job's owner and team (optional `user` and `team` columns; issue 48). Absent: one user. */
  user?: string;
  team?: string;
}

/** A loaded workload: its file and jobs in file order (the simulator's job order). */
export interface Workload {
  file: string;
  jobs: WorkloadJob[];
}

/** Directory of the shipped application traces. */
export function defaultTracesDir(): string {
  return packagePath('data', 'pollux', 'traces');
}

/**
 * Loads a workload CSV (columns name,time,application,num_replicas,batch_size; extra columns are
 * ignored, but for the optional `user` and `team`: who submitted the job and the team it is charged
 * to, issue 48). Errors (E_INPUT) name the file and line: missing column, malformed number, unknown
 * application, duplicate job name, batch size outside the application's validated range.
 */
export function loadWorkload(file: string, tracesDir = defaultTracesDir()): Workload {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : String((error as Error).message);
    throw new GoodputError('E_NOT_FOUND', `${file}: cannot read workload (${why}).`);
  }
  const table = parseCsv(text, file, ['name', 'time', 'application', 'num_replicas', 'batch_size']);
  if (table.rows.length === 0) throw inputError(file, undefined, 'the workload has no jobs');
  const seen = new Set<string>();
  const jobs = table.rows.map((row): WorkloadJob => {
    const name = row.cells[table.column('name')]!;
    if (name === '') throw inputError(file, row.line, "column 'name' is empty");
    if (seen.has(name)) throw inputError(file, row.line, `duplicate job name '${name}'`);
    seen.add(name);
    const appName = row.cells[table.column('application')]!;
    const application = getApplication(appName, tracesDir);
    if (!application)
      throw inputError(file, row.line, `unknown application '${appName}' (known: ${applicationNames.join(', ')})`);
    const submit_s = numberCell(table, row, 'time', { integer: true, min: 0 });
    const num_replicas = numberCell(table, row, 'num_replicas', { integer: true, min: 1 });
    const batch_size = numberCell(table, row, 'batch_size', { integer: true, min: 1 });
    if (batch_size < application.init_batch_size || batch_size > application.max_batch_size) {
      throw inputError(
        file,
        row.line,
        `batch_size ${batch_size} of ${appName} is outside its measured range [${application.init_batch_size}, ${application.max_batch_size}]`,
      );
    }
    if (num_replicas * application.min_local_bsz > batch_size) {
      throw inputError(
        file,
        row.line,
        `batch_size ${batch_size} cannot be split over ${num_replicas} GPUs (${appName} needs at least ${application.min_local_bsz} samples per GPU)`,
      );
    }
    return { name, submit_s, application, num_replicas, batch_size, line: row.line, ...ownerCells(file, table, row) };
  });
  return { file, jobs };
}

/**
 * `workload` with every submission moved by a uniform offset in [-spread_s / 2, spread_s / 2]
 * (whole seconds, floored at 0), drawn from `seed`. Pure: the same seed gives the same copy.
 * For judging a policy over perturbed copies of a workload: the simulator is chaotic (one job
 * finishing a round earlier or later moves a workload's average JCT by a few percent).
 */
export function jitterSubmissions(workload: Workload, spread_s: number, seed: number): Workload {
  if (spread_s <= 0) return workload;
  const random = new Random(seed);
  return {
    file: workload.file,
    jobs: workload.jobs.map((job) => ({
      ...job,
      submit_s: Math.max(0, Math.round(job.submit_s + (random.next() - 0.5) * spread_s)),
    })),
  };
}
