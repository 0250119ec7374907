/**
 * Recorded simulations (`goodput sim --out DIR` writes one JSON line per interval) turned into
 * what the simulation viewer draws: JCTs, GPU utilization over time and an allocation timeline
 * with one row per GPU. Records name a node per replica, not a GPU, so GPUs inside a node are
 * assigned here: a job keeps its GPUs while its count on the node does not shrink.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { z } from 'zod';
import { inputError } from '../core/errors.js';
import { TimelineBuilder } from './timeline.js';
import type { SimRunView } from './types.js';

const recordSchema = z.object({
  timestamp: z.number(),
  num_nodes: z.number().int().min(1),
  gpus_per_node: z.number().int().min(1).optional(),
  jobs: z.array(
    z.object({
      name: z.string(),
      allocation: z.array(z.number().int().min(0)),
      submission_time: z.number(),
      completion_time: z.number().nullable(),
    }),
  ),
});
type IntervalLine = z.infer<typeof recordSchema>;

/** Parses one interval log; a bad line is an E_INPUT error naming the file and line. */
export function readIntervalLog(file: string): IntervalLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw inputError(
      file,
      undefined,
      `cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)}); pass a file written by 'goodput sim --out DIR'`,
    );
  }
  const out: IntervalLine[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw inputError(file, i + 1, "not JSON; pass a file written by 'goodput sim --out DIR'");
    }
    const parsed = recordSchema.safeParse(value);
    if (!parsed.success)
      throw inputError(
        file,
        i + 1,
        `not an interval record (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`,
      );
    out.push(parsed.data);
  });
  if (out.length === 0) throw inputError(file, undefined, 'has no interval records');
  return out;
}

/** Labels for several files: the file name, or dir/name where names repeat (one dir per policy). */
export function runLabels(files: readonly string[]): string[] {
  const names = files.map((f) => basename(f).replace(/\.jsonl$/, ''));
  const unique = new Set(names).size === names.length;
  return files.map((f, i) => (unique ? names[i]! : `${basename(dirname(f))}/${names[i]}`));
}

/** The viewer's data of one run. */
export function simRunView(label: string, records: readonly IntervalLine[]): SimRunView {
  const num_nodes = records[0]!.num_nodes;
  const gpus_per_node = records[0]!.gpus_per_node ?? inferGpusPerNode(records);
  const total = num_nodes * gpus_per_node;
  const rows: string[] = [];
  for (let n = 0; n < num_nodes; n++) for (let g = 0; g < gpus_per_node; g++) rows.push(`n${n}/g${g}`);
  const last = records[records.length - 1]!;
  const dt_s = records.length > 1 ? records[1]!.timestamp - records[0]!.timestamp : 60;
  const builder = new TimelineBuilder(0, (last.timestamp + dt_s) * 1000, rows);
  const slots: (string | null)[][] = Array.from({ length: num_nodes }, () =>
    new Array<string | null>(gpus_per_node).fill(null),
  );
  const completion = new Map<string, number>();
  const util_t_s: number[] = [];
  const util: number[] = [];
  for (const r of records) {
    let used = 0;
    const want = new Map<string, number[]>();
    for (const j of r.jobs) {
      if (j.completion_time !== null) completion.set(j.name, j.completion_time - j.submission_time);
      used += j.allocation.length;
      const counts = new Array<number>(num_nodes).fill(0);
      for (const n of j.allocation) if (n < num_nodes) counts[n]! += 1;
      want.set(j.name, counts);
    }
    util_t_s.push(r.timestamp);
    util.push(used / total);
    slots.forEach((node, n) => assignSlots(node, n, want));
    slots.forEach((node, n) =>
      node.forEach((job, g) => {
        if (job !== null)
          builder.add(n * gpus_per_node + g, job, job, job, r.timestamp * 1000, (r.timestamp + dt_s) * 1000);
      }),
    );
  }
  return {
    label,
    num_nodes,
    gpus_per_node,
    jct_s: [...completion.values()].sort((a, b) => a - b),
    util_t_s,
    util,
    timeline: builder.build(),
  };
}

/** Updates one node's GPU slots to the wanted count per job, moving as few jobs as possible. */
function assignSlots(node: (string | null)[], n: number, want: ReadonlyMap<string, number[]>): void {
  const held = new Map<string, number>();
  node.forEach((job, g) => {
    if (job === null) return;
    const keep = want.get(job)?.[n] ?? 0;
    const count = held.get(job) ?? 0;
    if (count < keep) held.set(job, count + 1);
    else node[g] = null;
  });
  for (const [job, counts] of want) {
    let missing = (counts[n] ?? 0) - (held.get(job) ?? 0);
    for (let g = 0; g < node.length && missing > 0; g++) {
      if (node[g] === null) {
        node[g] = job;
        missing--;
      }
    }
  }
}

/** Largest number of replicas any job set placed on one node (logs written before gpus_per_node was recorded). */
function inferGpusPerNode(records: readonly IntervalLine[]): number {
  let most = 1;
  for (const r of records) {
    const used = new Array<number>(r.num_nodes).fill(0);
    for (const j of r.jobs) for (const n of j.allocation) used[n] = (used[n] ?? 0) + 1;
    most = Math.max(most, ...used);
  }
  return most;
}

/** Reads and summarizes every file, labelled as `runLabels` names them. */
export function loadSimRuns(files: readonly string[]): SimRunView[] {
  const labels = runLabels(files);
  const runs = files.map((f, i) => simRunView(labels[i]!, readIntervalLog(f)));
  // One time axis for all runs, so their timelines compare side by side.
  const end_ms = Math.max(...runs.map((r) => r.timeline.to_ms));
  for (const r of runs) r.timeline.to_ms = end_ms;
  return runs;
}
