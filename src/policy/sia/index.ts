/** Registry entry of Sia (SOSP'23): one (type, nodes, GPUs) configuration per job by integer program. */
import { requireSolver } from '../by-shape.js';
import type { PolicyFactory, PolicyOptions } from '../policy.js';
import { OpenNodes } from '../typed.js';
import { ModelMemo } from '../../goodput/model-memo.js';
import { SIA_DEFAULTS, SiaPolicy, type GoodputMemo } from './sia.js';

/** Sia over any cluster (one GPU type is the case of one type group). */
export const siaPolicy: PolicyFactory = {
  name: 'sia',
  job_mode: 'adaptive',
  description: "Sia (SOSP 2023): per-round integer program over each job's (GPU type, nodes, GPUs) goodput",
  uses_solver: true,
  create: (options: PolicyOptions) => {
    const solver = requireSolver(options.solver, 'sia');
    // One goodput memo for every instance OpenNodes makes (a new one whenever the open nodes change).
    const goodputs: GoodputMemo = new ModelMemo();
    return new OpenNodes(() => new SiaPolicy(solver, SIA_DEFAULTS, goodputs));
  },
};
