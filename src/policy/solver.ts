/**
 * The MILP solver of the typed policies: HiGHS compiled to WebAssembly (npm `highs`), loaded
 * once per process. Each solve is a fresh solver over CPLEX LP text.
 */
import highsModule, { type Highs } from 'highs';
import type { MilpSolver } from './sia/assignment.js';

// The package's ESM build exports the loader as default; its CommonJS-typed declarations
// describe that default as the module itself.
const highsLoader = highsModule as unknown as () => Promise<Highs>;

let loaded: Promise<MilpSolver> | undefined;

/** Columns above which the relative gap is loosened. */
const LARGE_PROGRAM_COLUMNS = 2000;

/**
 * The HiGHS-backed solver: relative MIP gap 1e-4 (Sia's optimality tolerance); 1e-2 for
 * programs of more than 2,000 columns (thousands of jobs), where proving 1e-4 took 3-4x the time
 * for 0.06% of the objective (measured at 2,048 GPUs, docs/heterogeneous.md).
 */
export function loadHighsSolver(): Promise<MilpSolver> {
  loaded ??= highsLoader().then((highs) => (lp: string): ReadonlyMap<string, number> | undefined => {
    const columns = lp.slice(lp.lastIndexOf('Binary')).split(/\s+/).length - 2;
    const r = highs.solve(lp, { mip_rel_gap: columns > LARGE_PROGRAM_COLUMNS ? 1e-2 : 1e-4, output_flag: false });
    if (r.Status !== 'Optimal') return undefined;
    const out = new Map<string, number>();
    for (const [name, col] of Object.entries(r.Columns)) out.set(name, (col as { Primal: number }).Primal);
    return out;
  });
  return loaded;
}
