/**
 * The assignment integer program shared by the typed policies: each job takes at most one
 * configuration (or a forced one), configurations use GPUs of one type group, a group's GPUs are
 * bounded; minimize the sum of the chosen configurations' costs. Written in CPLEX LP format for
 * an injected MILP solver (HiGHS in the simulator). Pure.
 */

/** A MILP solver over CPLEX LP text: the value of each named column, or undefined if infeasible. */
export type MilpSolver = (lp: string) => ReadonlyMap<string, number> | undefined;

/** One job's row: cost per allowed configuration index; `forced` must be chosen. */
export interface AssignmentRow {
  id: string;
  costs: ReadonlyMap<number, number>;
  forced?: number;
}

/** What a configuration uses: `gpus` GPUs of type group `group`. */
export interface ConfigUse {
  group: number;
  gpus: number;
}

/**
 * Chosen configuration index per job id (jobs left out get none). Jobs with no configuration of
 * negative cost and none forced are left out without entering the program. Falls back to a
 * greedy choice (cheapest first) when the solver finds no solution.
 */
export function solveAssignment(
  solver: MilpSolver,
  rows: readonly AssignmentRow[],
  configs: readonly ConfigUse[],
  capacity: readonly number[],
): Map<string, number> {
  const vars: { row: number; config: number; name: string; cost: number }[] = [];
  rows.forEach((r, i) => {
    r.costs.forEach((cost, c) => {
      if (cost < 0 || c === r.forced) vars.push({ row: i, config: c, name: `x${i}_${c}`, cost });
    });
  });
  const out = new Map<string, number>();
  if (vars.length === 0) return out;
  const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(6));
  const lines = [
    'Minimize',
    ' obj: ' + joinTerms(vars.map((v) => `${v.cost >= 0 ? '+' : '-'} ${fmt(Math.abs(v.cost))} ${v.name}`)),
    'Subject To',
  ];
  const byRow = new Map<number, string[]>();
  const byGroup = new Map<number, string[]>();
  for (const v of vars) {
    const list = byRow.get(v.row) ?? [];
    list.push(v.name);
    byRow.set(v.row, list);
    const use = configs[v.config]!;
    const g = byGroup.get(use.group) ?? [];
    g.push(`+ ${use.gpus} ${v.name}`);
    byGroup.set(use.group, g);
  }
  for (const [row, names] of byRow) lines.push(` j${row}: ${joinTerms(names.map((n) => `+ ${n}`))} <= 1`);
  for (const [group, terms] of byGroup) lines.push(` g${group}: ${joinTerms(terms)} <= ${capacity[group]}`);
  rows.forEach((r, i) => {
    if (r.forced !== undefined) lines.push(` f${i}: x${i}_${r.forced} = 1`);
  });
  lines.push('Binary', ...chunk(vars.map((v) => v.name)), 'End');
  const values = solver(lines.join('\n'));
  if (values) {
    for (const v of vars) if ((values.get(v.name) ?? 0) > 0.5) out.set(rows[v.row]!.id, v.config);
    return out;
  }
  return greedy(rows, vars, configs, capacity);
}

function greedy(
  rows: readonly AssignmentRow[],
  vars: readonly { row: number; config: number; cost: number }[],
  configs: readonly ConfigUse[],
  capacity: readonly number[],
): Map<string, number> {
  const left = [...capacity];
  const out = new Map<string, number>();
  for (const v of [...vars].sort((a, b) => a.cost - b.cost)) {
    const id = rows[v.row]!.id;
    const use = configs[v.config]!;
    if (out.has(id) || left[use.group]! < use.gpus) continue;
    left[use.group]! -= use.gpus;
    out.set(id, v.config);
  }
  return out;
}

function joinTerms(terms: readonly string[]): string {
  return chunk(terms).join('\n ');
}

/** LP files limit line length: at most 20 entries per line. */
function chunk(items: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < items.length; i += 20) out.push(' ' + items.slice(i, i + 20).join(' '));
  return out;
}
