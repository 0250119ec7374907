"""Per-step time breakdowns written as JSON for `goodput doctor` (GOODPUT_STEP_LOG).

Format: {"kind": "goodput.step_breakdown", "job": str, "host": {...}, "steps": [{"rank", "step",
"data_wait_s", "forward_backward_s", "sync_s", "optimizer_s", "between_steps_s"}, ...]}. Only the newest MAX_STEPS
steps are kept. A path containing "{rank}" gets one file per rank; otherwise rank 0 alone writes
it. Writes are atomic (temp file + rename), so the doctor never reads half a file.

`host` holds the CPU threads of this host's training processes (read when the file is written,
so a thread count changed after init() is seen): neither step times nor profiler traces show
thread oversubscription, these four numbers do (the doctor's `steps.cpu-oversubscribed`). With
torch.distributed initialized it also names the backend (`dist_backend`: "nccl", "gloo", ...),
so that the doctor's advice on slow gradient sync fits it (NCCL's transport settings mean
nothing to a gloo job).
"""

import json
import math
import os
from collections import deque
from typing import Any, Deque, Dict, Optional

import torch

MAX_STEPS = 10_000


def usable_cpus() -> int:
    """Cores this process may run on: the affinity mask (taskset, Slurm's cpu binding), bounded
    by a cgroup v2 CPU quota (containers); os.cpu_count() where neither is readable."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


def dist_backend() -> Optional[str]:
    """The backend of torch.distributed's default process group as get_backend() names it
    ("nccl", "gloo", "cpu:gloo,cuda:nccl" ...); None when torch.distributed is not initialized."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()):
        return None
    try:
        return str(dist.get_backend())
    except (RuntimeError, ValueError):  # the group was destroyed after the check
        return None


def _host(cpu_count: int, local_processes: int, dataloader_workers: int,
          in_memory_dataset: bool = False) -> Dict[str, Any]:
    host: Dict[str, Any] = {"cpu_count": cpu_count, "torch_threads": max(1, torch.get_num_threads()),
                            "local_processes": max(1, local_processes),
                            "dataloader_workers": max(0, dataloader_workers)}
    if in_memory_dataset:  # absent otherwise: the doctor then does not assume it
        host["in_memory_dataset"] = True
    backend = dist_backend()
    if backend is not None:  # absent, not null: the doctor then assumes no backend
        host["dist_backend"] = backend
    return host


def host_threads(local_processes: int, dataloader_workers: int) -> Dict[str, Any]:
    """The `host` object: cores, intra-op threads of this process, training processes on this
    host (LOCAL_WORLD_SIZE) and DataLoader worker processes of each (one thread each: PyTorch
    sets their thread count to 1), and `dist_backend` when torch.distributed is initialized."""
    return _host(usable_cpus(), local_processes, dataloader_workers)


class StepLog:
    def __init__(self, path: Optional[str], job: str, rank: int, local_processes: int = 1):
        self.job = job
        self.rank = rank
        self.local_processes = local_processes
        #: num_workers of the training loader, set by AdaptiveDataLoader(train=True)
        self.dataloader_workers = 0
        #: the training loader reads tensors already in memory (a TensorDataset): its data wait
        #: is indexing and collating, no I/O; set by AdaptiveDataLoader(train=True)
        self.in_memory_dataset = False
        self.path: Optional[str] = None
        if path and ("{rank}" in path or rank == 0):
            self.path = path.replace("{rank}", str(rank))
        self._steps: Deque[Dict[str, float]] = deque(maxlen=MAX_STEPS)
        self._cpu_count: Optional[int] = None

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def append(self, step: int, data_wait_s: float, forward_backward_s: float, sync_s: float,
               optimizer_s: float, between_steps_s: float = 0.0) -> None:
        self._steps.append({"rank": self.rank, "step": step, "data_wait_s": data_wait_s,
                            "forward_backward_s": forward_backward_s, "sync_s": sync_s,
                            "optimizer_s": optimizer_s, "between_steps_s": between_steps_s})

    def host(self) -> Dict[str, Any]:
        """The `host` object for a report (every step): the core count is read once, the
        thread count and the backend each time (a set_num_threads after init() is seen)."""
        if self._cpu_count is None:
            self._cpu_count = usable_cpus()
        return _host(self._cpu_count, self.local_processes, self.dataloader_workers,
                     self.in_memory_dataset)

    def write(self) -> None:
        if self.path is None:
            return
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        temp = f"{self.path}.tmp-{os.getpid()}"
        with open(temp, "w") as f:
            json.dump({"kind": "goodput.step_breakdown", "job": self.job,
                       "host": host_threads(self.local_processes, self.dataloader_workers),
                       "steps": list(self._steps)}, f)
        os.replace(temp, self.path)
