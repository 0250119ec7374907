/**
 * Recorded `nvidia-smi` outputs for the local backend's device discovery: the rows of real
 * captures (fixtures/doctor/nvidia-smi/captures, see fixtures/doctor/SOURCES.md), written as the
 * query the local backend runs (`--query-gpu=index,uuid,name,memory.total --format=csv,noheader,
 * nounits`, backends/local/devices.ts). A machine of several GPUs is assembled from one-GPU
 * captures: each GPU keeps its recorded name, uuid and memory, at the index given.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../../src/util/package-root.js';

/** The one-GPU captures at hand, by short name. */
export const CAPTURES = {
  h100: 'linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt',
  l40s: 'linux-x86_64__nvidia-l40s__595.80.txt',
  rtx4080: 'linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05.txt',
} as const;

/** The recorded GPU of a capture: its `--query-gpu` CSV row (idle section) by column. */
export function capturedGpu(capture: keyof typeof CAPTURES): { uuid: string; name: string; memory_mib: number } {
  const lines = readFileSync(
    packagePath('fixtures', 'doctor', 'nvidia-smi', 'captures', CAPTURES[capture]),
    'utf8',
  ).split('\n');
  const start = lines.findIndex((l) => l.startsWith('# idle :: query-gpu'));
  const rows = lines.slice(start + 1).filter((l) => !l.startsWith('#'));
  const header = rows[0]!.split(', ');
  const cells = rows[1]!.split(', ');
  const cell = (name: string) => cells[header.findIndex((h) => h === name || h.startsWith(`${name} [`))]!;
  return { uuid: cell('uuid'), name: cell('name'), memory_mib: Number(cell('memory.total').replace(/ MiB$/, '')) };
}

/** What the local backend's query prints for a machine of these GPUs (index = position). */
export function queryOutput(gpus: readonly (keyof typeof CAPTURES)[]): string {
  return gpus
    .map((c, index) => {
      const g = capturedGpu(c);
      return `${index}, ${g.uuid}, ${g.name}, ${g.memory_mib}\n`;
    })
    .join('');
}

/**
 * Writes an executable `nvidia-smi` into `dir` that prints `output` (whatever its arguments):
 * put `dir` first on PATH of a server process, and its local backend finds these GPUs.
 */
export function fakeNvidiaSmi(dir: string, output: string): string {
  const data = join(dir, 'nvidia-smi.out');
  writeFileSync(data, output);
  const bin = join(dir, 'nvidia-smi');
  writeFileSync(bin, `#!/bin/sh\ncat '${data}'\n`);
  chmodSync(bin, 0o755);
  return bin;
}
