/**
 * A whole plan for one profile key: the type models (plan-build.ts), a row per type and GPU count
 * (plan.ts) and the answers, with where each prediction comes from and what could not be done.
 * What `goodput plan` prints and the dashboard's plan page shows, built once for both. Pure.
 */
import { planModels } from './plan-build.js';
import { planAnswers, planType, type PlanAnswers, type PlanRequest, type PlanRow } from './plan.js';
import type { DeviceProfile, GpuSpec, TypeModel } from './plan-types.js';

/** What a plan shows. */
export interface PlanReport {
  key: string;
  target_samples: number;
  deadline_s: number | null;
  budget: number | null;
  currency: string;
  table: { date: string; source: string };
  types: { gpu_type: string; source: string; how: string }[];
  rows: PlanRow[];
  answers: PlanAnswers;
  notes: string[];
}

/** A GPU specification and price table (data/gpus.json's format). */
export interface GpuTable {
  date: string;
  currency: string;
  gpus: GpuSpec[];
}

/** What a plan is built from. */
export interface PlanReportInput {
  key: string;
  /** The key's profiles, one per device type. */
  profiles: readonly DeviceProfile[];
  /** Other keys' profiles (the cross-type data). */
  others: readonly (readonly DeviceProfile[])[];
  table: GpuTable;
  /** Where the table came from, as shown. */
  table_source: string;
  request: PlanRequest;
  /** Types to plan (default: the measured ones and the table's). */
  types?: readonly string[] | undefined;
  /** Notes placed first (e.g. an interrupted profile). */
  notes?: readonly string[];
}

/** The report's type list from the models. */
export function typeLines(models: readonly TypeModel[]): PlanReport['types'] {
  return models.map((m) => ({ gpu_type: m.spec.name, source: m.source, how: m.how }));
}

/** Builds the plan; throws an Error with a user-facing message when nothing can be planned. */
export function planReport(input: PlanReportInput): PlanReport {
  const { request, table } = input;
  const built = planModels({
    profiles: input.profiles,
    others: input.others,
    specs: table.gpus,
    ...(input.types ? { types: input.types } : {}),
  });
  const rows = built.models.flatMap((m) => planType(m, built.grad, built.limits, request));
  return {
    key: input.key,
    target_samples: request.target_samples,
    deadline_s: request.deadline_s ?? null,
    budget: request.budget ?? null,
    currency: table.currency,
    table: { date: table.date, source: input.table_source },
    types: typeLines(built.models),
    rows,
    answers: planAnswers(rows, request),
    notes: [...(input.notes ?? []), ...new Set(input.profiles.flatMap((p) => p.notes)), ...built.notes],
  };
}
