/**
 * Where `goodput profile` keeps what it measured and `goodput plan` reads it: a profile file
 * (`--out FILE`), or the data directory's store, the one the control plane learns from (points,
 * gradient samples, limits, parameter count and fit per key and device type), with the memory
 * profile and the notes beside it in `planner-profiles.json` (the store has no column for them).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { errnoReason } from '../util/directory.js';
import { GoodputError } from '../core/errors.js';
import { limitsSchema } from '../core/wire.js';
import { prepareOutput } from './output-file.js';
import { createPrivateFile, makeDataDir } from './secure.js';
import { fitPerfParams } from '../goodput/fit.js';
import type { DeviceProfile, MemoryProfile } from '../planner/plan-types.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';

const pointSchema = z.object({
  num_nodes: z.number().int().min(1),
  num_replicas: z.number().int().min(1),
  local_bsz: z.number().int().min(1),
  accum_step_time_s: z.number().finite().min(0),
  optim_step_time_s: z.number().finite().min(0),
});
const memorySchema = z.object({
  source: z.enum(['rss', 'allocator']),
  base_bytes: z.number().finite(),
  per_sample_bytes: z.number().finite().min(0),
  device_bytes: z.number().finite().min(0),
  max_local_bsz_fit: z.number().finite().min(0),
  samples: z.array(z.object({ local_bsz: z.number().int().min(1), peak_bytes: z.number().finite().min(0) })),
});
const deviceSchema = z.object({
  gpu_type: z.string().min(1),
  points: z.array(pointSchema),
  grad: z.array(z.object({ progress: z.number().min(0).max(1), sqr: z.number().finite(), var: z.number().finite() })),
  limits: limitsSchema.nullable(),
  model_parameters: z.number().int().min(1).optional(),
  memory: memorySchema.optional(),
  notes: z.array(z.string()),
});

/** A profile file: what `goodput profile --out FILE` wrote. */
export const profileFileSchema = z.object({
  kind: z.literal('goodput.profile'),
  version: z.literal(1),
  key: z.string().min(1),
  /** false when the profile was interrupted before its sweep ended. */
  complete: z.boolean(),
  devices: z.array(deviceSchema).min(1),
});
/** A profile file's content. */
export interface ProfileFile {
  kind: 'goodput.profile';
  version: 1;
  key: string;
  complete: boolean;
  devices: DeviceProfile[];
}

/** Reads and checks a profile file; E_INPUT naming the file when it is not one. */
export function readProfileFile(path: string): ProfileFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    // JSON.parse's message quotes the file's text: a CSV or binary file must not reach the terminal.
    const reason = error instanceof SyntaxError ? 'not JSON' : errnoReason(error);
    throw new GoodputError(
      'E_INPUT',
      `${path}: not a profile file (${reason}); 'goodput profile --out FILE -- ...' writes one`,
    );
  }
  const parsed = profileFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GoodputError(
      'E_INPUT',
      `${path}: not a goodput profile file (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`,
    );
  }
  return parsed.data as ProfileFile;
}

/** Creates the folder of profile file `path` if missing; E_OUTPUT saying why it cannot be written there. */
export function outputDir(path: string): void {
  prepareOutput(path, 'the profile', 'pass another --out');
}

/** Writes a profile file atomically (rename over the old one); E_OUTPUT when its folder cannot hold it. */
export function writeProfileFile(path: string, file: ProfileFile): void {
  outputDir(path);
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(file, null, 2) + '\n');
  renameSync(tmp, path);
}

const sideSchema = z.object({ memory: memorySchema.optional(), notes: z.array(z.string()) });
/** What the store has no column for, per key and device type: the memory profile and the notes. */
export type SideBook = Record<string, Record<string, { memory?: MemoryProfile; notes: string[] }>>;
const sidePath = (data_dir: string): string => join(data_dir, 'planner-profiles.json');

export function readSideBook(data_dir: string): SideBook {
  const path = sidePath(data_dir);
  if (!existsSync(path)) return {};
  try {
    const parsed = z
      .record(z.string(), z.record(z.string(), sideSchema))
      .safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? (parsed.data as SideBook) : {};
  } catch {
    return {};
  }
}

const storePath = (data_dir: string): string => join(data_dir, 'goodput.sqlite');

/**
 * Stores a device profile under `key` in the data directory's store, as a job of the key would
 * (merged into the key's profile on that type, then refitted), and its memory profile beside it.
 */
export async function saveToDataDir(
  data_dir: string,
  key: string,
  profile: DeviceProfile,
  run_id: string,
): Promise<void> {
  makeDataDir(data_dir, 0o700);
  createPrivateFile(storePath(data_dir)); // as the server creates it: 0600
  const store = new SqliteStore(storePath(data_dir), { background_checkpoint_ms: 0 });
  try {
    const merged = await store.mergeKeyProfile({
      key,
      gpu_type: profile.gpu_type,
      job_id: run_id,
      points: profile.points,
      grad: profile.grad,
      limits: profile.limits,
      ...(profile.model_parameters === undefined ? {} : { model_parameters: profile.model_parameters }),
    });
    if (merged.points.length > 0) await store.saveKeyProfilePerf(key, profile.gpu_type, fitPerfParams(merged.points));
  } finally {
    await store.close();
  }
  const book = readSideBook(data_dir);
  book[key] = {
    ...(book[key] ?? {}),
    [profile.gpu_type]: { ...(profile.memory ? { memory: profile.memory } : {}), notes: [...profile.notes] },
  };
  const tmp = `${sidePath(data_dir)}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(book, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, sidePath(data_dir));
}

/** Every key's device profiles in the data directory's store (the planner's cross-type data). */
export async function loadFromDataDir(data_dir: string): Promise<Map<string, DeviceProfile[]>> {
  const out = new Map<string, DeviceProfile[]>();
  const side = readSideBook(data_dir);
  const stored = (await withDataDirStore(data_dir, (store) => store.listKeyProfiles())) ?? [];
  for (const p of stored) {
    const extra = side[p.key]?.[p.gpu_type];
    const device: DeviceProfile = {
      gpu_type: p.gpu_type,
      points: p.points,
      grad: p.grad,
      limits: p.limits,
      notes: extra?.notes ?? [],
    };
    if (p.model_parameters !== undefined) device.model_parameters = p.model_parameters;
    if (extra?.memory) device.memory = extra.memory;
    out.set(p.key, [...(out.get(p.key) ?? []), device]);
  }
  return out;
}

/**
 * Runs `use` on the data directory's store, opened for this call and closed after it; undefined,
 * without creating one, when the directory has no store.
 */
export async function withDataDirStore<T>(
  data_dir: string,
  use: (store: SqliteStore) => Promise<T>,
): Promise<T | undefined> {
  if (!existsSync(storePath(data_dir))) return undefined;
  const store = new SqliteStore(storePath(data_dir), { background_checkpoint_ms: 0 });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}
