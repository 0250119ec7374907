/**
 * Reads a GPU specification and price table (data/gpus.json's format; `goodput plan --prices`
 * replaces it), for the CLI's plan and the dashboard's plan page.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { GoodputError } from '../core/errors.js';
import type { GpuTable } from '../planner/plan-report.js';
import { errnoReason } from '../util/directory.js';
import { packagePath } from '../util/package-root.js';

const specSchema = z.object({
  name: z.string().min(1),
  match: z.array(z.string()),
  fp32_tflops: z.number().positive(),
  fp16_tflops: z.number().positive(),
  memory_gib: z.number().positive(),
  memory_bandwidth_gbs: z.number().positive(),
  intra_node_gbs: z.number().positive(),
  inter_node_gbps: z.number().positive(),
  gpus_per_node: z.number().int().min(1),
  price_per_gpu_hour: z.number().min(0).nullable(),
});
const tableSchema = z.object({ date: z.string(), currency: z.string(), gpus: z.array(specSchema).min(1) });

/** The table shipped with the package. */
export const DEFAULT_GPU_TABLE = (): string => packagePath('data', 'gpus.json');

/** Reads and checks the table at `path`; E_INPUT naming the file and the first problem. */
export function readGpuTable(path: string): GpuTable {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new GoodputError(
      'E_INPUT',
      `--prices ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory, not a file' : errnoReason(error)}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the file; a CSV or binary file must not reach the terminal.
    throw new GoodputError(
      'E_INPUT',
      `--prices ${path}: not a JSON file. The table is JSON in the format of data/gpus.json ` +
        `(date, currency, gpus: one entry per GPU type with its price_per_gpu_hour): copy that ` +
        `file and edit it`,
    );
  }
  const parsed = tableSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GoodputError(
      'E_INPUT',
      `--prices ${path}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'} (see data/gpus.json for the format)`,
    );
  }
  return parsed.data;
}
