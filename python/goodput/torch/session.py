"""`init()`: the one entry point that turns the launch environment into a Runtime."""

import datetime
from typing import Optional

import torch
import torch.distributed as dist

from .env import read_job_env
from .runtime import Runtime

_RUNTIME: Optional[Runtime] = None

DEFAULT_CHECKPOINT_INTERVAL_S = 600.0


def _pick_device(local_rank: int) -> torch.device:
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return torch.device("cpu")
    # Goodput's backends, like torchrun, show a rank its node's GPUs of the job with its own at
    # LOCAL_RANK; where only one is visible (a launcher binding one GPU per process), index 0.
    index = local_rank if local_rank < torch.cuda.device_count() else 0
    return torch.device("cuda", index)


def init(backend: Optional[str] = None, checkpoint_dir: Optional[str] = None,
         checkpoint_interval_s: float = DEFAULT_CHECKPOINT_INTERVAL_S,
         checkpoint_every_epoch: bool = True, timeout_s: float = 1800.0) -> Runtime:
    """Reads the environment, picks the device, joins the process group and loads the latest
    checkpoint (if any). Idempotent: later calls return the same Runtime.

    backend: "nccl" on GPU and "gloo" on CPU unless given. The process group is created only
    when WORLD_SIZE > 1 (and reused if the script already created one).
    """
    global _RUNTIME
    if _RUNTIME is not None:
        return _RUNTIME
    env = read_job_env(checkpoint_dir=checkpoint_dir)
    device = _pick_device(env.local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True  # fixed shapes per config: let cuDNN pick kernels
    if env.world_size > 1 and not dist.is_initialized():
        dist.init_process_group(backend or ("nccl" if device.type == "cuda" else "gloo"),
                                init_method="env://", rank=env.rank, world_size=env.world_size,
                                timeout=datetime.timedelta(seconds=timeout_s))
    _RUNTIME = Runtime(env, device, checkpoint_interval_s, checkpoint_every_epoch)
    _RUNTIME.install_process_hooks()
    return _RUNTIME


def current() -> Runtime:
    """The Runtime, initializing with defaults if the script did not call init()."""
    return _RUNTIME if _RUNTIME is not None else init()


def is_initialized() -> bool:
    return _RUNTIME is not None
