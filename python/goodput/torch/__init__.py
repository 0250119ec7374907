"""Goodput SDK for PyTorch.

    import goodput.torch as gt
    gt.init()
    model = gt.AdaptiveDataParallel(net, optimizer, scheduler)
    loader = gt.AdaptiveDataLoader(dataset, batch_size=128, shuffle=True, max_batch_size=1024)
    for epoch in gt.remaining_epochs(10):
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x.to(gt.device())), y.to(gt.device()))
            loss.backward()
            optimizer.step()

See docs/sdk.md for the full guide and docs/contract.md for the control-plane contract.
"""

import torch as _torch

import os as _os
from typing import Optional as _Optional

from .accumulator import Accumulator
from .data import AdaptiveDataLoader
from .env import EXIT_CHECKPOINTED, share_dir as _share_dir
from .epochs import remaining_epochs
from .parallel import AdaptiveDataParallel
from .profiling import export_trace, trace_handler
from .session import current, init, is_initialized
from .trackers import Scalars, TensorBoardTracker, Tracker


def device() -> _torch.device:
    """The device this replica trains on (cuda:N or cpu)."""
    return current().device


def rank() -> int:
    return current().rank


def world_size() -> int:
    return current().world_size


def job_id() -> _Optional[str]:
    """The job's id under the control plane (GOODPUT_JOB_ID); None when running alone."""
    return current().env.job_id


def share_path() -> str:
    """A directory shared by the job's replicas and kept across its restarts, for the job's own
    files (downloaded data, artefacts); created if missing. GOODPUT_SHARE_DIR when set, else
    `share` next to the checkpoint directory (`<job dir>/share` under the control plane)."""
    path = _share_dir(checkpoint_dir=current().env.checkpoint_dir)
    _os.makedirs(path, exist_ok=True)
    return path


def checkpoint() -> None:
    """Collective checkpoint now (every rank must call it at the same point)."""
    current().checkpoint()


def add_tracker(tracker: Tracker):
    """Registers `tracker(step, scalars)`, called on rank 0 with the SDK's scalars (goodput,
    batch size, learning-rate scale, gradient noise, throughput; see goodput.torch.trackers)
    every GOODPUT_SCALARS_INTERVAL_S seconds. Returns a function that unregisters it."""
    return current().scalars.add(tracker)


def request_stop() -> None:
    """Behave as if SIGTERM arrived: checkpoint at the next step boundary and exit 143."""
    current().stop_signal.set()


__all__ = ["Accumulator", "AdaptiveDataLoader", "AdaptiveDataParallel", "EXIT_CHECKPOINTED",
           "Scalars", "TensorBoardTracker", "Tracker", "add_tracker", "checkpoint", "current",
           "device", "export_trace", "init", "is_initialized", "job_id", "rank",
           "remaining_epochs", "request_stop", "share_path", "trace_handler", "world_size"]
