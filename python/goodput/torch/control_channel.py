"""One small all-reduce per control round (every few optimizer steps) that keeps replicas in
agreement.

Every rank contributes a float64 vector (stop flag, checkpoint flag, rank 0's configuration and
spacing, gradient-noise measurements); the SUM is identical on every rank. The collective is
launched asynchronously at the end of a round step and read two rounds later, so its latency is
hidden behind steps of compute; because every rank reads the same results at the same step,
decisions (stop, checkpoint, new batch size, LR scale) are taken at the same step everywhere.

On CUDA the reduced vector is copied to pinned host memory behind an event, so reading it waits
only for that step's work, never for the steps queued after it.
"""

from typing import List, Sequence

import torch
import torch.distributed as dist


class PendingReduce:
    def __init__(self, work: object, vector: torch.Tensor):
        self._work = work
        self._vector = vector
        self._host = None
        self._event = None
        if vector.is_cuda:
            self._work.wait()  # NCCL: makes the current stream wait; does not block the host
            self._host = torch.empty(vector.shape, dtype=vector.dtype, pin_memory=True)
            self._host.copy_(vector, non_blocking=True)
            self._event = torch.cuda.Event()
            self._event.record()

    def result(self) -> List[float]:
        if self._event is not None:
            self._event.synchronize()
            return self._host.tolist()
        self._work.wait()
        return self._vector.tolist()


class ControlChannel:
    def __init__(self, device: torch.device):
        self.device = device

    def launch(self, flags: Sequence[float], tensors: Sequence[torch.Tensor]) -> PendingReduce:
        head = torch.tensor(list(flags), dtype=torch.float64)
        if self.device.type == "cuda":
            head = head.pin_memory().to(self.device, non_blocking=True)
        parts = [head]
        if tensors:
            parts.append(torch.stack([t.detach().reshape(()).to(self.device, torch.float64)
                                      for t in tensors]))
        vector = torch.cat(parts)
        work = dist.all_reduce(vector, async_op=True)
        return PendingReduce(work, vector)
