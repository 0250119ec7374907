/**
 * The planner's type models for one profile key: the types it was measured on (fitted as the
 * policy fits a job: model/job-fit.ts), types where it measured one GPU and other keys measured
 * both (transferred), and the other types of the GPU table (estimated from the specifications).
 * Pure.
 */
import { fitPerfParams } from '../goodput/fit.js';
import type { BatchLimits, GradParams } from '../goodput/types.js';
import { fitJob } from '../model/job-fit.js';
import type { OtherKey } from '../goodput/type-transfer-model.js';
import {
  estimatedModel,
  measuredModel,
  specFor,
  transferredModel,
  type DeviceProfile,
  type GpuSpec,
  type TypeModel,
} from './plan-types.js';

/** What the planner predicts from. */
export interface PlanInput {
  /** The key's profiles, one per device type measured. */
  profiles: readonly DeviceProfile[];
  /** Other keys' profiles (the store's cross-type data); empty for a profile file. */
  others: readonly (readonly DeviceProfile[])[];
  specs: readonly GpuSpec[];
  /** Types to predict (names or device names); undefined: the measured types and every GPU of the table. */
  types?: readonly string[];
}

/** The models, the job's gradient noise and batch limits, and what could not be done. */
export interface PlanModels {
  models: TypeModel[];
  grad: GradParams | undefined;
  limits: BatchLimits;
  notes: string[];
}

/** Builds the type models; throws an Error with a user-facing message when nothing can be planned. */
export function planModels(input: PlanInput): PlanModels {
  const notes: string[] = [];
  const measured = input.profiles.filter((p) => p.points.length > 0 && p.limits !== null);
  if (measured.length === 0) throw new Error('the profile has no measured configuration with batch limits');
  const reference = [...measured].sort(
    (a, b) => maxReplicas(b) - maxReplicas(a) || b.points.length - a.points.length,
  )[0]!;
  const limits = reference.limits!;
  const gradSample = reference.grad[0] ?? measured.find((p) => p.grad.length > 0)?.grad[0];
  const grad = gradSample ? { sqr: gradSample.sqr, var: gradSample.var } : undefined;
  const byType = new Map<string, TypeModel>();
  const referenceSpec = specFor(input.specs, reference.gpu_type);
  if (!referenceSpec)
    throw new Error(
      `the measured type '${reference.gpu_type}' is not in the GPU table: add it (with a 'match' for its device name) in a --prices file`,
    );
  const referenceModel = modelOfMeasured(reference, referenceSpec);
  byType.set(referenceSpec.name, referenceModel);
  for (const p of measured) {
    if (p === reference) continue;
    const spec = specFor(input.specs, p.gpu_type);
    if (!spec) {
      notes.push(`measured type '${p.gpu_type}' is not in the GPU table: left out`);
      continue;
    }
    const others = otherKeys(input.others, reference.gpu_type, p.gpu_type);
    const transferred =
      maxReplicas(p) === 1 && maxReplicas(reference) > 1 ? transferredModel(reference, p, others, spec) : undefined;
    const withCount =
      p.model_parameters === undefined && reference.model_parameters !== undefined
        ? { ...p, model_parameters: reference.model_parameters }
        : p;
    byType.set(spec.name, transferred ?? modelOfMeasured(withCount, spec));
  }
  const wanted = input.types ?? [...byType.keys(), ...input.specs.filter((s) => s.name !== 'cpu').map((s) => s.name)];
  const models: TypeModel[] = [];
  for (const name of wanted) {
    const spec = specFor(input.specs, name);
    if (!spec) {
      notes.push(`no GPU type '${name}' in the table`);
      continue;
    }
    if (models.some((m) => m.spec.name === spec.name)) continue;
    models.push(byType.get(spec.name) ?? estimatedModel(referenceModel, spec, reference.model_parameters));
  }
  if (models.length === 0)
    throw new Error(
      `none of the types asked for is in the GPU table (${wanted.join(', ')}); it has ${input.specs.map((s) => s.name).join(', ')}`,
    );
  if (reference.model_parameters === undefined)
    notes.push(
      'no parameter count in the profile: sync on other types is carried over as measured, not predicted from the links',
    );
  return { models, grad, limits, notes };
}

function modelOfMeasured(profile: DeviceProfile, spec: GpuSpec): TypeModel {
  const fit = fitJob({ own: profile.points, corrected: false, fit: fitPerfParams });
  if (!fit) throw new Error(`no measured point on '${profile.gpu_type}'`);
  return measuredModel(profile, spec, fit.perf);
}

function maxReplicas(p: DeviceProfile): number {
  return p.points.reduce((m, q) => Math.max(m, q.num_replicas), 0);
}

/** Other keys with points on both the reference type and the target type. */
function otherKeys(others: readonly (readonly DeviceProfile[])[], reference: string, target: string): OtherKey[] {
  const out: OtherKey[] = [];
  for (const key of others) {
    const ref = key.find((p) => p.gpu_type === reference);
    const tgt = key.find((p) => p.gpu_type === target);
    if (ref && tgt && ref.points.length > 0 && tgt.points.length > 0)
      out.push({ reference: ref.points, target: tgt.points });
  }
  return out;
}
