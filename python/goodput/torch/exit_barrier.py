"""The exit barrier: at a normal exit of a multi-replica gloo job, the runtime's exit hook runs
one barrier over the replicas and keeps its Work until the interpreter tears it down.

Why: gloo's worker threads outlive `destroy_process_group()` while anything holds the group
(the DistributedDataParallel of AdaptiveDataParallel does), so they run on through interpreter
finalization. A worker thread drops its references to a collective only after the collective's
waiter has been woken, and the last reference frees the collective's tensors; freeing one whose
Python object died first (it is then owned by the C++ tensor) takes the GIL. A worker thread
that ran late (a loaded host) did so as the interpreter finalized and was ended inside a
destructor: "terminate called without an active exception", SIGABRT (or SIGSEGV) instead of
exit 0, after the job had finished. Its last collectives were the last control rounds (e.g.
with `checkpoint_every_epoch=False`) or the script's own after the last checkpoint.

gloo's barrier keeps weak references to the collectives still queued or held by a worker
thread when it is issued, and a collective is freed only with its last reference, weak ones
included. Held here, they are freed by the main thread, once finalizing, when torch leaves
their Python objects alone. The same hold protects a stop's exit: checkpointing.py keeps its
checkpoint's barrier.
"""

import sys
from typing import Any

import torch.distributed as dist


class ExitBarrier:
    """One barrier, issued by `hold()` at most once; its Work lives as long as this object."""

    def __init__(self) -> None:
        self._work: Any = None

    def hold(self) -> None:
        """Collective: every rank must call it, last (after its other collectives). Does nothing
        once the group is destroyed (the script's own `dist.destroy_process_group()`: then its
        collectives keep the risk). Best-effort: a peer that died makes it fail at once, which
        is printed."""
        # gloo only: the crash is gloo's (its worker threads), and NCCL's barrier would have to
        # guess a device.
        if self._work is not None or not dist.is_initialized() or dist.get_backend() != "gloo":
            return
        try:
            self._work = dist.barrier(async_op=True)
            self._work.wait()
        except Exception as error:  # a peer that already died: nothing left to agree on
            print(f"goodput: exit barrier: {error}", file=sys.stderr)
