/**
 * HTA's kernel classification: a name containing `ncclKernel` is communication, one containing
 * `Memcpy` or `Memset` is memory, everything else is computation.
 */
export type KernelKind = 'computation' | 'communication' | 'memory';

/** Numeric codes used in the compact kernel columns. */
export const KIND_CODE: Readonly<Record<KernelKind, number>> = { computation: 0, communication: 1, memory: 2 };
export const KIND_BY_CODE: readonly KernelKind[] = ['computation', 'communication', 'memory'];

/** Pure; same rule as HTA `get_kernel_type`. */
export function kernelKind(name: string): KernelKind {
  if (name.includes('ncclKernel') || name.includes('ncclDevKernel')) return 'communication';
  if (name.includes('Memcpy') || name.includes('Memset')) return 'memory';
  return 'computation';
}
