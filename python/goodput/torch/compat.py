"""The few places where torch 1.13 and 2.x differ, in one file."""

import contextlib
from typing import Iterable, List, Optional

import torch


def autocast(device_type: str, enabled: bool):
    """fp16 autocast on CUDA, bf16 on CPU; a no-op context when disabled."""
    if not enabled:
        return contextlib.nullcontext()
    dtype = torch.float16 if device_type == "cuda" else torch.bfloat16
    return torch.autocast(device_type=device_type, dtype=dtype)


def grad_scaler(enabled: bool) -> Optional[object]:
    """A CUDA GradScaler: torch.amp.GradScaler("cuda") on torch >= 2.3, torch.cuda.amp before."""
    if not enabled:
        return None
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def scaler_scale_tensor(scaler: object) -> Optional[torch.Tensor]:
    """The current loss scale as a tensor without a host sync (private API on both versions)."""
    getter = getattr(scaler, "_get_scale_async", None)
    if getter is not None:
        return getter()
    return getattr(scaler, "_scale", None)


def grads_of(params: Iterable[torch.nn.Parameter]) -> List[torch.Tensor]:
    return [p.grad for p in params if p.grad is not None]


def sum_of_squares(tensors: List[torch.Tensor]) -> torch.Tensor:
    """Sum of squared entries of all tensors, in a few fused kernels (no per-tensor .item())."""
    if not tensors:
        return torch.zeros(())
    foreach_norm = getattr(torch, "_foreach_norm", None)
    if foreach_norm is not None:
        norms = foreach_norm(tensors)
    else:
        norms = [torch.linalg.vector_norm(t) for t in tensors]
    return torch.stack([n.float() for n in norms]).pow(2).sum()


def divide_(tensors: List[torch.Tensor], divisor: float) -> None:
    if not tensors:
        return
    foreach_div = getattr(torch, "_foreach_div_", None)
    if foreach_div is not None:
        foreach_div(tensors, divisor)
    else:
        for tensor in tensors:
            tensor.div_(divisor)


def queue_backward_callback(callback) -> None:
    """Runs `callback` once the current backward pass has finished (call it from inside the
    backward, e.g. from a tensor hook). DDP relies on the same engine method in 1.x and 2.x."""
    torch.autograd.Variable._execution_engine.queue_callback(callback)  # type: ignore[attr-defined]
