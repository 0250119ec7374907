/**
 * The torch.distributed backend an SDK job reports in its `host` object (`dist_backend`,
 * docs/contract.md): what the doctor's advice on gradient synchronisation depends on, since NCCL's
 * transport settings mean nothing to a CPU job whose collectives run on gloo. A leaf with no
 * dependencies: the API's schema, the doctor's parsers and the dashboard's bundle share it.
 */

/**
 * A well-formed `dist_backend`: torch's backend names (`nccl`, `gloo`, `mpi`, `ucc`, a
 * third-party one) or its per-device form (`cpu:gloo,cuda:nccl`); 1 to 40 characters.
 */
export const DIST_BACKEND_RE = /^[A-Za-z0-9_.:,+-]{1,40}$/;

/** The value when it is a well-formed backend name, else undefined (anything else is ignored). Pure. */
export function distBackendOf(value: unknown): string | undefined {
  return typeof value === 'string' && DIST_BACKEND_RE.test(value) ? value : undefined;
}

/**
 * Which transport advice fits: `nccl` or `gloo` when the backend is that one alone, `unknown`
 * when absent, another backend, or a per-device mix (which device's tensors are all-reduced is
 * not in the report). Case-insensitive. Pure.
 */
export function backendFamily(backend: string | undefined): 'nccl' | 'gloo' | 'unknown' {
  const b = backend?.toLowerCase();
  return b === 'nccl' || b === 'gloo' ? b : 'unknown';
}
