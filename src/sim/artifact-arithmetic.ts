/** Small arithmetic of the original (Pollux artifact) simulator that exact reproduction needs. */

/** Packs `num_replicas` GPUs onto as few nodes as possible: (g, g, ..., rest). */
export function packedPlacement(num_replicas: number, gpus_per_node: number): number[] {
  const out: number[] = [];
  let left = num_replicas;
  while (left > 0) {
    const take = Math.min(left, gpus_per_node);
    out.push(take);
    left -= take;
  }
  return out;
}

/** Python's round() on a float: nearest integer, ties to even. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}
