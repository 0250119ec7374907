"""The plain records the loader, the model wrapper and the runtime exchange about one step."""

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class MicroStep:
    """Where the current micro-batch sits in its optimizer step."""
    index: int
    sync: bool          # last micro-batch of the optimizer step: all-reduce and step now
    local_bsz: int      # this rank's micro-batch size
    global_count: int   # samples in this micro-step over all ranks


@dataclass
class NoiseSample:
    """One step's gradient-noise measurement of the model (see grad_noise.py)."""
    small_sqr: Any      # float or 0-d tensor: this rank's |g_local|^2 (mean over its samples)
    total_sqr: Any      # float or 0-d tensor: |g_bar|^2 after all-reduce
    small_batch: int
    total_batch: int
    biased: bool = False


@dataclass
class StepTiming:
    optimizer_start_s: float
    optimizer_end_s: float
    sync_s: Optional[float]  # None: the all-reduce ran inside backward, untimed (estimated)
