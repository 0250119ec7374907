/**
 * Colours of the jobs on a dashboard page (the cluster's devices and timeline, the plan's GPU
 * types). A hash of the job id gave four of nine jobs nearly the same teal; here the jobs of a
 * page take the colours of one palette in order, so the first 12 are distinct (pairwise CIE76
 * colour difference at least 29, checked by colors.test.ts); later ones get hues a golden angle
 * apart. Pure; bundled into the browser app.
 */

/** Grey: devices or jobs the viewer may not see (other users'). */
export const OTHER_COLOR = '#9aa0a6';

/** Twelve distinct colours (after Sasha Trubetskoy's list of distinct colours), most distinct first. */
export const JOB_PALETTE: readonly string[] = [
  '#4363d8',
  '#e6194b',
  '#3cb44b',
  '#f58231',
  '#911eb4',
  '#42d4f4',
  '#f032e6',
  '#bfef45',
  '#469990',
  '#9a6324',
  '#800000',
  '#ffe119',
];

/** The colour of the i-th job of a page (0-based). */
export function jobColorAt(i: number): string {
  return JOB_PALETTE[i] ?? `hsl(${Math.round((i * 137.508) % 360)} 60% 45%)`;
}

/**
 * Colours by key for one page: the keys in `order` take the palette in that order, keys met
 * later the next colours; '' (another user's job) is grey. Two views built from the same
 * `order` (the timeline and its legend) agree.
 */
export function jobColorMap(order: readonly string[]): (key: string) => string {
  const index = new Map<string, number>();
  const add = (key: string): number => {
    let i = index.get(key);
    if (i === undefined) index.set(key, (i = index.size));
    return i;
  };
  for (const key of order) if (key !== '') add(key);
  return (key) => (key === '' ? OTHER_COLOR : jobColorAt(add(key)));
}
