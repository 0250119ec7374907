import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultDataDir } from '../../client/connect.js';
import { GoodputError, usageError } from '../../core/errors.js';
import { writeOutputFile } from '../../datadir/output-file.js';
import type { PlanRequest } from '../../planner/plan.js';
import { planReport, type PlanReport } from '../../planner/plan-report.js';
import type { DeviceProfile } from '../../planner/plan-types.js';
import { DEFAULT_GPU_TABLE, readGpuTable } from '../../datadir/gpu-table.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';
import { renderPlan, renderPlanHtml } from '../../planner/plan-render.js';
import { loadFromDataDir, readProfileFile } from '../../datadir/profile-file.js';

const flags = {
  gpus: { type: 'string' },
  'gpu-type': { type: 'string' },
  epochs: { type: 'string' },
  'samples-per-epoch': { type: 'string' },
  'target-samples': { type: 'string' },
  deadline: { type: 'string' },
  budget: { type: 'string' },
  prices: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  html: { type: 'string' },
} as const;

export const planCommand: CliCommand = {
  name: 'plan',
  options: flags,
  help: `Usage: goodput plan KEY|FILE [options]

Reads the profile that 'goodput profile' stored (a profile key in the data directory, or a
profile file) and predicts, for each GPU type and count, the throughput, statistical efficiency,
best batch size and accumulation, memory per GPU, time to the target, GPU-hours and cost, with the
goodput model the scheduler uses. Types the profile did not measure are transferred from other
keys' profiles on both types where the store has them, else estimated from the GPU table's specs;
each row says which (measured / transferred / estimated). Then: the fastest plan within the
budget, the cheapest within the deadline, the knee of each type, and advice. Every time, cost
and memory has an 80% interval (docs/planner.md says what each rests on and how often it held);
when the answer's interval overlaps another type's, the plan says which type to measure. CPU
slots are shown as measured, never priced, extrapolated or recommended; GPU memory is shown
only from a GPU measurement.

  --gpus LIST               GPU counts (default 1,2,4,8,16,32)
  --gpu-type T,...          types of the GPU table (default: measured types and every GPU)
  --target-samples N        samples to train (default: one million)
  --epochs N --samples-per-epoch M   the same as N x M samples
  --deadline D              e.g. 6h, 90m, 2d, 3600 (seconds)
  --budget X                in the table's currency
  --prices FILE             GPU spec and price table (default data/gpus.json, dated, with sources)
  --data-dir DIR            data directory for KEY (default $GOODPUT_DATA_DIR or ~/.goodput)
  --json                    the plan as JSON
  --html FILE               also write a self-contained HTML chart`,
  async run(argv) {
    const { values, positionals } = parseFlags('plan', argv, flags);
    if (positionals.length !== 1)
      throw usageError("plan: give one profile key or profile file. See 'goodput plan --help'.");
    const source = positionals[0]!;
    const gpus = parseList('gpus', values.gpus ?? '1,2,4,8,16,32');
    const request: PlanRequest = { gpus, target_samples: targetSamples(values) };
    if (values.deadline !== undefined) request.deadline_s = parseDuration(values.deadline);
    if (values.budget !== undefined) request.budget = numberFlag('plan', 'budget', values.budget, 0, { min: 0 });
    const table = readGpuTable(values.prices ?? DEFAULT_GPU_TABLE());
    let key: string;
    let profiles: DeviceProfile[];
    let others: DeviceProfile[][] = [];
    const notes: string[] = [];
    if (existsSync(source) && !source.endsWith('/')) {
      const file = readProfileFile(source);
      key = file.key;
      profiles = file.devices;
      if (!file.complete)
        notes.push('the profile was interrupted before its sweep ended: fewer configurations were measured');
    } else {
      const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
      const all = await loadFromDataDir(data_dir);
      key = source;
      profiles = all.get(source) ?? [];
      if (profiles.length === 0)
        throw new GoodputError(
          'E_NOT_FOUND',
          `plan: no profile '${source}' in ${data_dir} and no such file (run 'goodput profile' first, or see 'goodput profiles ls')`,
        );
      others = [...all.entries()].filter(([k]) => k !== source).map(([, v]) => v);
    }
    const types = values['gpu-type']
      ?.split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    let report: PlanReport;
    try {
      report = planReport({
        key,
        profiles,
        others,
        table,
        table_source: values.prices ? resolve(values.prices) : 'data/gpus.json',
        request,
        types,
        notes,
      });
    } catch (error) {
      throw new GoodputError('E_INPUT', `plan: ${(error as Error).message}`);
    }
    if (values.html) writeOutputFile(values.html, renderPlanHtml(report), 'the HTML chart', 'pass another --html');
    console.log(
      values.json
        ? JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)
        : renderPlan(report),
    );
    return 0;
  },
};

function parseList(flag: string, value: string): number[] {
  const list = value.split(',').map((v) => numberFlag('plan', flag, v.trim(), 0, { integer: true, min: 1 }));
  return [...new Set(list)].sort((a, b) => a - b);
}

function targetSamples(values: {
  epochs?: string | undefined;
  'samples-per-epoch'?: string | undefined;
  'target-samples'?: string | undefined;
}): number {
  if (values['target-samples'] !== undefined) {
    if (values.epochs !== undefined) throw usageError('plan: give --target-samples or --epochs, not both.');
    return numberFlag('plan', 'target-samples', values['target-samples'], 0, { min: 1 });
  }
  if (values.epochs !== undefined) {
    if (values['samples-per-epoch'] === undefined)
      throw usageError('plan: --epochs needs --samples-per-epoch M (the size of one epoch in samples).');
    return (
      numberFlag('plan', 'epochs', values.epochs, 0, { min: 0.001 }) *
      numberFlag('plan', 'samples-per-epoch', values['samples-per-epoch'], 0, { min: 1 })
    );
  }
  return 1e6;
}

/** `6h`, `90m`, `45s`, `2d` or seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/.exec(value.trim());
  if (!match) throw usageError(`plan: --deadline must look like 6h, 90m, 2d or 3600; got '${value}'.`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}
