"""The SDK's own training scalars for TensorBoard and other experiment trackers.

Every few seconds (GOODPUT_SCALARS_INTERVAL_S, default 5; 0 = every step) rank 0 hands each
registered tracker `(step, scalars)`, where `scalars` maps these names to floats:

    throughput_samples_s    samples per second since the previous call (all replicas)
    statistical_efficiency  progress per sample relative to the initial batch size, in (0, 1]
    goodput                 throughput_samples_s x statistical_efficiency
    batch_size              total batch = local_bsz x (accum_steps + 1) x replicas
    local_bsz, accum_steps, replicas
    lr_scale                learning-rate multiplier applied at this batch size (AdaScale)
    grad_sqr, grad_var      gradient statistics (squared norm, variance at the initial batch)
    gradient_noise_scale    initial batch x grad_var / grad_sqr: the batch size at which gradient
                            noise and signal are equal (present once both are measured)
    progress                scale-invariant progress (initial-batch steps)

A tracker is any callable `tracker(step, scalars)`; `gt.add_tracker(fn)` registers one (e.g. a
wandb or MLflow logger). A tracker that raises is reported once on stderr and then skipped, so a
logging problem never stops training. TensorBoard: when `torch.utils.tensorboard` can be
imported, rank 0 writes the scalars under `goodput/<name>` to GOODPUT_TENSORBOARD_DIR, or under
the control plane to `<job dir>/tensorboard`; GOODPUT_TENSORBOARD=0 turns it off.
"""

import os
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional

Scalars = Dict[str, float]
Tracker = Callable[[int, Scalars], Any]

DEFAULT_INTERVAL_S = 5.0


class TensorBoardTracker:
    """Writes each scalar as `goodput/<name>` with torch.utils.tensorboard's SummaryWriter.
    Raises ImportError when tensorboard is not installed."""

    def __init__(self, log_dir: str):
        from torch.utils.tensorboard import SummaryWriter  # needs the tensorboard package

        self.log_dir = log_dir
        self._writer = SummaryWriter(log_dir=log_dir)

    def __call__(self, step: int, scalars: Scalars) -> None:
        for name, value in scalars.items():
            self._writer.add_scalar(f"goodput/{name}", value, step)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


def tensorboard_dir(environ: Mapping[str, str], checkpoint_dir: str,
                    has_control_plane: bool) -> Optional[str]:
    """Where TensorBoard scalars go, or None (turned off, or standalone without a directory)."""
    if environ.get("GOODPUT_TENSORBOARD", "1") == "0":
        return None
    if environ.get("GOODPUT_TENSORBOARD_DIR"):
        return environ["GOODPUT_TENSORBOARD_DIR"]
    if has_control_plane:  # checkpoint_dir is <job dir>/checkpoint under the control plane
        return os.path.join(os.path.dirname(os.path.abspath(checkpoint_dir)), "tensorboard")
    return None


class ScalarPublisher:
    """Rate-limited fan-out of step scalars to trackers (rank 0 only: `active=False` elsewhere)."""

    def __init__(self, active: bool, interval_s: float = DEFAULT_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic):
        self.active = active
        self.interval_s = interval_s
        self._clock = clock
        self._trackers: List[Tracker] = []
        self._failed: set = set()
        self._last_s: Optional[float] = None
        self._last_samples = 0

    @classmethod
    def for_job(cls, environ: Mapping[str, str], rank: int, checkpoint_dir: str,
                has_control_plane: bool) -> "ScalarPublisher":
        try:
            interval_s = max(0.0, float(environ.get("GOODPUT_SCALARS_INTERVAL_S", "")))
        except ValueError:
            interval_s = DEFAULT_INTERVAL_S
        publisher = cls(active=rank == 0, interval_s=interval_s)
        log_dir = tensorboard_dir(environ, checkpoint_dir, has_control_plane) if rank == 0 else None
        if log_dir is not None:
            try:
                publisher.add(TensorBoardTracker(log_dir))
            except ImportError as error:
                if environ.get("GOODPUT_TENSORBOARD_DIR"):
                    print(f"goodput: no TensorBoard scalars: {error} (install tensorboard)",
                          file=sys.stderr, flush=True)
        return publisher

    def add(self, tracker: Tracker) -> Callable[[], None]:
        """Registers `tracker`; returns a function that unregisters it."""
        self._trackers.append(tracker)
        return lambda: self._trackers.remove(tracker) if tracker in self._trackers else None

    def due(self, samples_done: int) -> Optional[float]:
        """Seconds since the last publication when one is due now (None otherwise). The first
        call only starts the clock, so throughput always spans a measured interval."""
        if not self.active or not self._trackers:
            return None
        now = self._clock()
        if self._last_s is None:
            self._last_s, self._last_samples = now, samples_done
            return None
        elapsed_s = now - self._last_s
        if elapsed_s <= 0 or elapsed_s < self.interval_s:
            return None
        return elapsed_s

    def publish(self, step: int, samples_done: int, scalars: Scalars) -> None:
        """Calls every tracker; one that raises is reported once and skipped from then on."""
        self._last_s, self._last_samples = self._clock(), samples_done
        for tracker in list(self._trackers):
            if id(tracker) in self._failed:
                continue
            try:
                tracker(step, scalars)
            except Exception as error:  # a tracker's fault must not stop training
                self._failed.add(id(tracker))
                print(f"goodput: tracker {tracker!r} failed and is skipped from now on: "
                      f"{type(error).__name__}: {error}", file=sys.stderr, flush=True)

    @property
    def last_samples(self) -> int:
        return self._last_samples

    def after_step(self, rt: Any, gain: float, lr_scale: float) -> None:
        """Publishes the scalars of the Runtime `rt` after a step, when due."""
        elapsed_s = self.due(rt.samples_done)
        if elapsed_s is None or rt.batch is None:
            return
        provider = rt.noise_values_provider
        grad_sqr, grad_var = provider() if provider else (None, None)
        self.publish(rt.steps_done, rt.samples_done, step_scalars(
            samples=rt.samples_done - self._last_samples, elapsed_s=elapsed_s,
            local_bsz=rt.batch.local_bsz, accum_steps=rt.batch.accum_steps,
            replicas=rt.world_size, init_batch_size=rt.init_batch_size, gain=gain,
            lr_scale=lr_scale, grad_sqr=grad_sqr, grad_var=grad_var, progress=rt.progress))

    def close(self) -> None:
        for tracker in self._trackers:
            close = getattr(tracker, "close", None)
            if callable(close):
                close()
        self._trackers.clear()


def step_scalars(*, samples: int, elapsed_s: float, local_bsz: int, accum_steps: int,
                 replicas: int, init_batch_size: Optional[int], gain: float, lr_scale: float,
                 grad_sqr: Optional[float], grad_var: Optional[float],
                 progress: float) -> Scalars:
    """The scalars of one publication (see the module docstring). Pure."""
    batch = local_bsz * (accum_steps + 1) * replicas
    scale = batch / init_batch_size if init_batch_size else 1.0
    efficiency = min(1.0, gain / scale) if scale > 0 else 1.0
    throughput = samples / elapsed_s if elapsed_s > 0 else 0.0
    scalars: Scalars = {
        "throughput_samples_s": throughput, "statistical_efficiency": efficiency,
        "goodput": throughput * efficiency, "batch_size": float(batch),
        "local_bsz": float(local_bsz), "accum_steps": float(accum_steps),
        "replicas": float(replicas), "lr_scale": lr_scale, "progress": progress,
    }
    if grad_sqr is not None and grad_var is not None:
        scalars["grad_sqr"], scalars["grad_var"] = float(grad_sqr), float(grad_var)
        if grad_sqr > 0 and init_batch_size:
            scalars["gradient_noise_scale"] = init_batch_size * grad_var / grad_sqr
    return scalars
