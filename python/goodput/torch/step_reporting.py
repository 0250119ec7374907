"""What the runtime tells the outside about each optimizer step: its time breakdown (data wait,
forward+backward, gradient sync, optimizer, and the script's own time between steps), the
step-log file read by `goodput doctor`, and the report records rank 0 posts to the control plane
(report_client.py).

Between steps: from the moment the SDK's end-of-step work returns (after optimizer.step()) to the
loader's next begin_step(), the script runs its own code: `loss.item()`, `torch.cuda.synchronize()`,
logging, evaluation. On CUDA a sync there waits for the GPU to drain, a cost that falls in no
other phase, so it is measured as `between_steps_s`. The first step of each pass over the loader
has none (what runs between epochs is not per-step work)."""

import time
from typing import Any, Dict, Optional, Tuple

from .rank_summary import RankSummaries
from .report_client import ReportClient
from .step_log import StepLog
from .step_types import StepTiming
from .sync_estimate import SyncTimeEstimate


class StepReporting:
    def __init__(self, step_log: StepLog, distributed: bool):
        self.step_log = step_log
        self.distributed = distributed
        self.reporter: Optional[ReportClient] = None
        # Every rank's summary for the verdicts across ranks (rank_summary.py); None without a control plane.
        self.ranks: Optional[RankSummaries] = None
        self._sync_estimate = SyncTimeEstimate()
        self._skip_steps = 1
        self._step_start_s: Optional[float] = None
        self._data_wait_s = 0.0
        # When the SDK's work at the end of the previous step returned; None at a pass's start.
        self._returned_s: Optional[float] = None
        self._between_steps_s = 0.0

    def begin_step(self, boundary_s: Optional[float] = None) -> None:
        """`boundary_s`: when the loader asked for the step, before the SDK's own work at the
        boundary (checkpoints), which is not the script's time between steps."""
        now = time.perf_counter()
        if self._returned_s is not None:
            self._between_steps_s = max(0.0, (now if boundary_s is None else boundary_s) - self._returned_s)
        self._returned_s = None
        self._step_start_s = now
        self._data_wait_s = 0.0
        if self.ranks is not None:
            self.ranks.phase("step")

    def step_returned(self) -> None:
        """The SDK's end-of-step work is done: the script's own code runs until the next step."""
        self._returned_s = time.perf_counter()
        if self.ranks is not None:
            self.ranks.phase("between")

    def new_pass(self) -> None:
        """A new pass over the training loader: its first step has no time between steps."""
        self._returned_s = None

    def add_data_wait(self, seconds: float) -> None:
        self._data_wait_s += seconds

    def configuration_changed(self) -> None:
        """The next step is a warm-up (not reported); compute time changes with the batch."""
        self._skip_steps = 1
        self._sync_estimate.reset()

    def end_step(self, rt: Any, timing: StepTiming) -> float:
        """Breaks the step down, logs it and queues its report; returns the step time."""
        start_s = self._step_start_s if self._step_start_s is not None else timing.optimizer_start_s
        step_time_s = timing.optimizer_end_s - start_s
        optimizer_s = timing.optimizer_end_s - timing.optimizer_start_s
        data_wait_s = self._data_wait_s
        forward_backward_and_sync_s = max(0.0, step_time_s - data_wait_s - optimizer_s)
        sync_s = self._sync_time(timing.sync_s, forward_backward_and_sync_s)
        forward_backward_s = max(0.0, forward_backward_and_sync_s - sync_s)
        between_steps_s, self._between_steps_s = self._between_steps_s, 0.0
        self._step_start_s = timing.optimizer_end_s  # used when no loader drives the steps
        self._data_wait_s = 0.0
        if self.step_log.enabled:
            self.step_log.append(rt.steps_done, data_wait_s, forward_backward_s, sync_s,
                                 optimizer_s, between_steps_s)
        if self.ranks is not None:
            self.ranks.step_done(rt.steps_done, data_wait_s, forward_backward_s + optimizer_s, sync_s,
                                 between_steps_s)
        if self.reporter is not None:
            if self._skip_steps > 0:
                self._skip_steps -= 1  # warm-up step after a (re)configuration
            else:
                self.reporter.submit(report_record(rt, step_time_s, sync_s, data_wait_s,
                                                   forward_backward_s, optimizer_s,
                                                   between_steps_s))
        return step_time_s

    def _sync_time(self, measured_s: Optional[float], forward_backward_and_sync_s: float) -> float:
        """This step's gradient-sync time: measured on measuring steps, estimated on the others
        (see sync_estimate.py); 0 with one replica."""
        if not self.distributed:
            return measured_s or 0.0
        if measured_s is not None:
            self._sync_estimate.measured(max(0.0, forward_backward_and_sync_s - measured_s),
                                         measured_s)
            return measured_s
        return self._sync_estimate.overlapped(forward_backward_and_sync_s)

    def close(self) -> None:
        if self.ranks is not None:
            self.ranks.close()
        if self.reporter is not None:
            self.reporter.close(timeout_s=2.0)
        self.step_log.write()


def report_record(rt: Any, step_time_s: float, sync_s: float, data_wait_s: float,
                  forward_backward_s: float, optimizer_s: float,
                  between_steps_s: float = 0.0) -> Dict[str, Any]:
    """One step's entry of the report endpoint (docs/contract.md), from the runtime `rt`.
    `step_time_s` stays the step proper (data wait to the optimizer's end, what the throughput
    model fits); the script's time between steps is in the breakdown only."""
    grad_sqr, grad_var = _noise_values(rt)
    record: Dict[str, Any] = {
        "time_s": time.time(), "step": rt.steps_done, "epoch": rt.epoch or 0,
        "num_nodes": rt.env.num_nodes, "num_replicas": rt.world_size,
        "local_bsz": rt.batch.local_bsz if rt.batch else None,
        "accum_steps": rt.batch.accum_steps if rt.batch else 0,
        "step_time_s": step_time_s, "sync_time_s": sync_s,
        "grad_sqr": grad_sqr, "grad_var": grad_var,
        "samples": rt.samples_done, "loss": rt.last_loss,
        "breakdown": {"data_wait_s": data_wait_s, "forward_backward_s": forward_backward_s,
                      "sync_s": sync_s, "optimizer_s": optimizer_s,
                      "between_steps_s": between_steps_s},
        "host": rt.step_log.host(),
    }
    remaining = rt.remaining_samples()
    if remaining is not None:  # unknown: omitted (the contract's field is optional)
        record["remaining_samples"] = remaining
    if rt.checkpoint_time_s is not None:
        record["checkpoint_time_s"] = rt.checkpoint_time_s
    if rt.model_parameters is not None:
        record["model_parameters"] = rt.model_parameters
    peak = _gpu_memory_peak_bytes()
    if peak is not None:
        record["memory_peak_bytes"] = peak
    return record


def _gpu_memory_peak_bytes() -> Optional[int]:
    """The CUDA allocator's peak since the previous call (the peak is reset after reading), so
    each entry carries the peak of its own steps; None where the process has not used CUDA
    (reading it must not initialize CUDA in a CPU job)."""
    import torch
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return None
    peak = int(torch.cuda.max_memory_allocated())
    torch.cuda.reset_peak_memory_stats()
    return peak


def _noise_values(rt: Any) -> Tuple[Optional[float], Optional[float]]:
    provider = rt.noise_values_provider
    return provider() if provider else (None, None)
