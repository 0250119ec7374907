/**
 * The one profile keeper: what a key's profile on one GPU type keeps of each report, for the
 * one-type simulator (sim/profile-store.ts), the mixed-type simulator (sim/hetero/key-profiles.ts)
 * and the control plane (control/reports/profile-book.ts, whose store merges by the same
 * goodput/key-profile.ts `addToProfile`). The drivers differ only in where the profiles live:
 * in memory for the simulators ({@link ProfileKeeper}), in SQLite for the control plane. Pure.
 */
import { addToProfile, emptyProfile, newConfigs, type GradSample, type KeyProfile } from '../goodput/key-profile.js';
import type { ProfilePoint } from '../goodput/types.js';

/** One job's new reports to a key's profile on one type. */
export interface ProfileReport {
  points: readonly ProfilePoint[];
  grad: readonly GradSample[];
  /** Whether this is the job's first report to the profile (it counts the job once). */
  new_job: boolean;
  /** The job's model's parameter count, when it reports one. */
  model_parameters?: number;
}

/** A profile with a report kept, and the configurations the report measured first. */
export interface KeptReport<P extends KeyProfile> {
  profile: P;
  /** Points at configurations (nodes, replicas, batch) the profile had not measured before. */
  added: ProfilePoint[];
}

/**
 * The one rule for keeping a report: `before` with its points, gradient samples and parameter
 * count merged in (goodput/key-profile.ts `addToProfile`: one point per configuration, the
 * newest; points in configuration order; gradient samples by progress). Fields of `before`
 * beyond KeyProfile's are kept as they are.
 */
export function keepReport<P extends KeyProfile>(before: P, report: ProfileReport): KeptReport<P> {
  const added = newConfigs(before.points, report.points);
  const merged = addToProfile(before, report.points, report.grad, report.new_job, report.model_parameters);
  return { profile: { ...before, ...merged }, added };
}

/**
 * Key profiles in memory, one per (key, GPU type), kept by {@link keepReport}: the simulators'
 * store. Deterministic: profiles change only by `report`, in the order the driver calls it.
 */
export class ProfileKeeper {
  private readonly profiles = new Map<string, KeyProfile>();

  private static id(key: string, gpu_type: string): string {
    return `${gpu_type}\u0000${key}`;
  }

  /** Keeps `report` in the profile of `key` on `gpu_type` (created empty when absent). */
  report(key: string, gpu_type: string, report: ProfileReport): KeptReport<KeyProfile> {
    const id = ProfileKeeper.id(key, gpu_type);
    const kept = keepReport(this.profiles.get(id) ?? emptyProfile(key, gpu_type), report);
    this.profiles.set(id, kept.profile);
    return kept;
  }

  /** The profile of `key` on `gpu_type`, if any job reported to it. */
  get(key: string, gpu_type: string): KeyProfile | undefined {
    return this.profiles.get(ProfileKeeper.id(key, gpu_type));
  }

  /** Every profile, in the order they were first reported to. */
  all(): IterableIterator<KeyProfile> {
    return this.profiles.values();
  }

  /** Number of profiles reported to. */
  get size(): number {
    return this.profiles.size;
  }
}
