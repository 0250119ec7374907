"""The gradient all-reduce of a measuring step, with |g_local|^2 before it and |g_bar|^2 after.

Why it exists: on ordinary steps DDP's C++ reducer averages the gradients inside backward, with
no Python on the path and no place to read a replica's own gradient. On the steps that measure
gradient noise the wrapper turns DDP's reduction off (no_sync) and runs `GradientSync.run` at the
end of backward instead. It copies the gradients into flat buffers of at most `chunk_bytes`
(grouped by dtype and device, like DDP's buckets), takes the local square norm of each buffer,
averages the buffers over the replicas, takes the global square norm and copies the result back.
The next chunk is copied while the previous one is on the wire; at most two chunks exist at a
time, so the extra memory stays bounded however big the model is.

Every rank runs it at the same step with the same parameter list and chunking, so the
collectives match. With find_unused_parameters=True the ranks also agree on which parameters got
a gradient anywhere: a parameter without one on every rank keeps grad None, as under DDP.
"""

from typing import Iterator, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

DEFAULT_CHUNK_BYTES = 25 * 1024 * 1024  # DDP's default bucket_cap_mb


class GradientSync:
    def __init__(self, params: Sequence[torch.nn.Parameter], world_size: int,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES, track_unused: bool = False):
        self.params = [p for p in params if p.requires_grad]
        self.world_size = world_size
        self.chunk_bytes = max(1, chunk_bytes)
        self.track_unused = track_unused

    def run(self, micro_count: int) -> Tuple[torch.Tensor, torch.Tensor]:
        """Averages the gradients (sums over `micro_count` micro-steps) over replicas and
        micro-steps in place. Returns (|local sum|^2, |global mean|^2) as 0-d float tensors."""
        used = self._used_anywhere() if self.track_unused else None
        divisor = float(self.world_size * max(1, micro_count))
        local_parts: List[torch.Tensor] = []
        global_parts: List[torch.Tensor] = []
        in_flight = None
        for chunk in _chunks(self.params, self.chunk_bytes):
            flat = torch.cat([_flat_grad(param) for _, param in chunk])
            local_parts.append(_square_norm(flat))
            flat.div_(divisor)
            work = dist.all_reduce(flat, async_op=True)
            if in_flight is not None:
                global_parts.append(_finish(*in_flight, used))
            in_flight = (work, flat, chunk)
        if in_flight is not None:
            global_parts.append(_finish(*in_flight, used))
        if not local_parts:
            zero = torch.zeros(())
            return zero, zero
        return torch.stack(local_parts).sum(), torch.stack(global_parts).sum()

    def _used_anywhere(self) -> List[bool]:
        """Which parameters have a gradient on at least one rank (one tiny all-reduce)."""
        if not self.params:
            return []
        device = self.params[0].device
        flags = torch.tensor([1.0 if p.grad is not None else 0.0 for p in self.params],
                             device=device)
        dist.all_reduce(flags)
        return [count > 0 for count in flags.tolist()]


def _chunks(params: List[torch.nn.Parameter], chunk_bytes: int
            ) -> Iterator[List[Tuple[int, torch.nn.Parameter]]]:
    """(index, parameter) groups of one dtype and device, each at most chunk_bytes (or one
    parameter); identical on every rank because the parameter list is."""
    chunk: List[Tuple[int, torch.nn.Parameter]] = []
    size, key = 0, None
    for index, param in enumerate(params):
        param_key = (param.dtype, param.device)
        nbytes = param.numel() * param.element_size()
        if chunk and (param_key != key or size + nbytes > chunk_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((index, param))
        size += nbytes
        key = param_key
    if chunk:
        yield chunk


def _flat_grad(param: torch.nn.Parameter) -> torch.Tensor:
    if param.grad is None:  # unused here, maybe used elsewhere: contributes zeros
        return torch.zeros(param.numel(), dtype=param.dtype, device=param.device)
    return param.grad.reshape(-1)


def _square_norm(flat: torch.Tensor) -> torch.Tensor:
    wide = flat if flat.dtype in (torch.float32, torch.float64) else flat.float()
    return torch.dot(wide, wide).float()


def _finish(work: object, flat: torch.Tensor, chunk: List[Tuple[int, torch.nn.Parameter]],
            used: Optional[List[bool]]) -> torch.Tensor:
    """Waits for one chunk's all-reduce, copies it back into the gradients, returns its norm."""
    work.wait()  # type: ignore[attr-defined]
    offset = 0
    for index, param in chunk:
        numel = param.numel()
        reduced = flat[offset:offset + numel].view_as(param)
        offset += numel
        if param.grad is not None:
            param.grad.copy_(reduced)
        elif used is None or used[index]:
            param.grad = reduced.clone()
    return _square_norm(flat)
