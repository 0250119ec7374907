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

from collections import deque
from dataclasses import dataclass
from typing import Any, Deque, List, Optional, Sequence, Tuple

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


# Layout of the control vector's head; two noise values follow it.
_STOP, _CHECKPOINT, _VERSION, _LOCAL_BSZ, _ACCUM, _NOISE_VALID, _ROUND_EVERY, \
    _MEASURE_EVERY = range(8)
_HEAD_LEN = 8


@dataclass(frozen=True)
class RoundProposal:
    """What one rank puts into a control round."""
    stop: bool
    checkpoint: bool = False                        # rank 0 only
    spacing: Optional[Tuple[int, int]] = None       # rank 0 only: (round_every, measure_every)
    config: Optional[Tuple[int, int, int]] = None   # rank 0 only: (version, local_bsz, accum)


@dataclass(frozen=True)
class RoundDecision:
    """What every rank reads back from a control round (identical on every rank)."""
    stop: bool
    checkpoint: bool
    spacing: Optional[Tuple[int, int]]
    config: Optional[Tuple[int, int, int]]
    #: (mean |g_local|^2, |g_bar|^2, small batch, total batch, steps) when every rank measured
    noise: Optional[Tuple[float, float, int, int, int]]


class ControlRounds:
    """The rounds in flight: launched at the end of a round step, read two rounds later."""

    def __init__(self, device: torch.device, world_size: int):
        self.device = device
        self.world_size = world_size
        self._channel = ControlChannel(device)
        self._pending: Deque[Tuple[PendingReduce, Optional[Tuple[int, int, int]]]] = deque()

    def launch(self, proposal: RoundProposal, noise: Optional[Tuple[Any, Any, int, int, int]]
               ) -> None:
        """noise: (|g_local|^2, |g_bar|^2, small batch, total batch, steps) measured by this
        rank, or None."""
        flags = _flags(proposal)
        # Fixed length on every rank and step, whatever the measurement: a collective whose
        # size differed between ranks would hang.
        tensors: List[torch.Tensor] = [torch.zeros((), device=self.device),
                                       torch.zeros((), device=self.device)]
        meta = None
        if noise is not None:
            flags[_NOISE_VALID] = 1.0
            tensors = [torch.as_tensor(noise[0]), torch.as_tensor(noise[1]) / self.world_size]
            meta = (noise[2], noise[3], noise[4])
        self._pending.append((self._channel.launch(flags, tensors), meta))

    def due(self, keep: int = 2) -> List[RoundDecision]:
        """The decisions of the rounds launched before the newest `keep` (0: all of them)."""
        decisions = []
        while len(self._pending) > keep:
            pending, meta = self._pending.popleft()
            decisions.append(self._decide(pending.result(), meta))
        return decisions

    def blocking(self, proposal: RoundProposal) -> RoundDecision:
        """A round read at once (between epochs)."""
        placeholders = [torch.zeros((), device=self.device) for _ in range(2)]
        return self._decide(self._channel.launch(_flags(proposal), placeholders).result(), None)

    def drain(self) -> None:
        """Waits for the rounds still in flight. Every rank launched the same rounds, so they
        complete; a process that exits with gloo work in flight aborts in C++ instead."""
        while self._pending:
            pending, _ = self._pending.popleft()
            pending.result()

    def _decide(self, values: List[float], meta: Optional[Tuple[int, int, int]]) -> RoundDecision:
        spacing = None
        if values[_ROUND_EVERY] >= 1 and values[_MEASURE_EVERY] >= 1:
            spacing = (int(values[_ROUND_EVERY]), int(values[_MEASURE_EVERY]))
        config = None
        if values[_LOCAL_BSZ] >= 1:
            config = (int(values[_VERSION]), int(values[_LOCAL_BSZ]), int(values[_ACCUM]))
        noise = None
        if meta is not None and values[_NOISE_VALID] == self.world_size:
            noise = (values[_HEAD_LEN] / self.world_size, values[_HEAD_LEN + 1], *meta)
        return RoundDecision(values[_STOP] > 0, values[_CHECKPOINT] > 0, spacing, config, noise)


def _flags(proposal: RoundProposal) -> List[float]:
    flags = [0.0] * _HEAD_LEN
    flags[_STOP] = 1.0 if proposal.stop else 0.0
    flags[_CHECKPOINT] = 1.0 if proposal.checkpoint else 0.0
    if proposal.spacing is not None:
        flags[_ROUND_EVERY], flags[_MEASURE_EVERY] = map(float, proposal.spacing)
    if proposal.config is not None:
        flags[_VERSION], flags[_LOCAL_BSZ], flags[_ACCUM] = map(float, proposal.config)
    return flags
