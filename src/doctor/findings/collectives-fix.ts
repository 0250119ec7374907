/**
 * Fixes for time spent waiting on peers (gradient all-reduce), chosen by the torch.distributed
 * backend the job reports (`dist_backend`): NCCL's transport settings only when NCCL is in play,
 * gloo's own remedies for gloo, and a check that assumes neither when the backend is unknown.
 */
import { backendFamily } from '../../core/dist-backend.js';

const OVERLAP =
  'DDP: DistributedDataParallel(model, bucket_cap_mb=50, gradient_as_bucket_view=True, ' +
  'static_graph=True) so gradient all-reduce overlaps the backward pass';
const ACCUMULATE =
  'Gradient accumulation with model.no_sync() on the inner micro-steps: one all-reduce per N micro-batches hides a slow network';

const FIX: Readonly<Record<'nccl' | 'gloo' | 'unknown', readonly string[]>> = {
  nccl: [
    OVERLAP,
    ACCUMULATE,
    'Check the transport with NCCL_DEBUG=INFO (goodput doctor reads the log): cross-node ' +
      'traffic should be NET/IB or EFA with GDRDMA (NCCL_IB_HCA), intra-node P2P/NVLink; look ' +
      'for a straggler rank',
  ],
  // gloo moves every gradient through the host's TCP stack (between processes on one host too)
  // and reduces it on the CPU cores that also train: fewer, larger, rarer messages help most.
  gloo: [
    'gloo all-reduces the gradients over the host network (TCP, also between processes on one ' +
      'host): accumulate micro-batches with model.no_sync() on the inner micro-steps, so one ' +
      'all-reduce serves N of them',
    'Larger DDP buckets: DistributedDataParallel(model, bucket_cap_mb=100, ' +
      'gradient_as_bucket_view=True) sends fewer, larger messages and overlaps them with the ' +
      'backward pass',
    'Fewer replicas per host (gloo reduces on the same CPU cores that train), or move to GPUs ' +
      'with backend="nccl", which uses NVLink and InfiniBand where gloo cannot',
  ],
  unknown: [
    OVERLAP,
    ACCUMULATE,
    "Check the collective backend's transport (NCCL_DEBUG=INFO for NCCL; goodput doctor reads " +
      'the log): cross-node traffic should use RDMA (InfiniBand, EFA), not TCP sockets; look for ' +
      'a straggler rank',
  ],
};

const SHORT_FIX: Readonly<Record<'nccl' | 'gloo' | 'unknown', string>> = {
  nccl:
    'overlap all-reduce with backward (DDP bucket_cap_mb), accumulate with no_sync(), check ' +
    'the NCCL transport (NCCL_DEBUG=INFO: NET/IB or EFA across nodes, P2P/NVLink within one)',
  gloo:
    'gloo syncs gradients over TCP on the host: accumulate micro-batches with no_sync(), ' +
    'larger DDP buckets (bucket_cap_mb), fewer replicas per host, or GPUs with NCCL',
  unknown:
    'overlap all-reduce with backward (DDP bucket_cap_mb), accumulate with no_sync(), check ' +
    "the collective backend's transport (NCCL_DEBUG=INFO for NCCL)",
};

/** Fixes for waiting on peers, most effective first, for the reported backend (absent: unknown). Pure. */
export function collectivesFix(backend: string | undefined): readonly string[] {
  return FIX[backendFamily(backend)];
}

/** The same advice as one clause, for the live verdict's single line. Pure. */
export function collectivesShortFix(backend: string | undefined): string {
  return SHORT_FIX[backendFamily(backend)];
}
