/** Slurm hostlist expressions (`gp[1-3,7],login01`), expanded. Pure. */

/**
 * Expands a Slurm hostlist into node names in order: `a[1-2],b` -> a1, a2, b. Ranges keep
 * zero padding (`n[01-02]` -> n01, n02). Empty or `(null)` gives [].
 */
export function expandHostlist(list: string): string[] {
  if (list === '' || list === '(null)') return [];
  const out: string[] = [];
  for (const part of list.split(/,(?![^[]*\])/)) {
    const m = /^([^[]*)\[([^\]]+)\](.*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    const [, prefix, ranges, suffix] = m;
    for (const range of ranges!.split(',')) {
      const [lo, hi] = range.split('-');
      if (hi === undefined) {
        out.push(`${prefix}${lo}${suffix}`);
        continue;
      }
      for (let i = Number(lo); i <= Number(hi); i++)
        out.push(`${prefix}${String(i).padStart(lo!.length, '0')}${suffix}`);
    }
  }
  return out;
}
