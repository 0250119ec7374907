"""Per-replica batch configuration and the limits a job declares (docs/contract.md `limits`)."""

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional


@dataclass(frozen=True)
class BatchLimits:
    """What the user allows. Invariant: min_local_bsz <= max_local_bsz, init <= max_batch_size."""
    init_batch_size: int
    max_batch_size: int
    min_local_bsz: int
    max_local_bsz: Optional[int]
    accumulation: bool

    def __post_init__(self) -> None:
        if self.init_batch_size < 1:
            raise ValueError("goodput: batch_size must be >= 1")
        if self.max_batch_size < self.init_batch_size:
            raise ValueError(f"goodput: max_batch_size={self.max_batch_size} is smaller than "
                             f"batch_size={self.init_batch_size}")
        if self.min_local_bsz < 1 or (self.max_local_bsz is not None and
                                      self.max_local_bsz < self.min_local_bsz):
            raise ValueError(f"goodput: invalid local_bsz_bounds=({self.min_local_bsz}, "
                             f"{self.max_local_bsz})")

    @property
    def adaptive(self) -> bool:
        return self.max_batch_size > self.init_batch_size

    def to_report(self) -> Dict[str, Any]:
        return {"init_batch_size": self.init_batch_size, "max_batch_size": self.max_batch_size,
                "min_local_bsz": self.min_local_bsz,
                "max_local_bsz": self.max_local_bsz if self.max_local_bsz is not None
                else self.max_batch_size,
                "accumulation": self.accumulation}


@dataclass(frozen=True)
class BatchConfig:
    """Per-replica micro-batch and extra micro-steps per optimizer step (0 = no accumulation)."""
    local_bsz: int
    accum_steps: int

    def total_batch_size(self, world_size: int) -> int:
        return self.local_bsz * world_size * (self.accum_steps + 1)


# Tolerance of the rule's ceil operations (src/goodput/batch-split.ts SPLIT_EPS).
SPLIT_EPS = 1e-8


def split_batch(limits: BatchLimits, batch_size: float, num_replicas: int,
                accumulate_on_one: bool = False) -> BatchConfig:
    """Port of splitBatch in src/goodput/batch-split.ts (checked on the shared cases in
    fixtures/batch-split/cases.json): the fewest micro-steps that keep the per-replica batch
    within max_local_bsz, and at least two micro-steps on one replica training above B0."""
    max_local = limits.to_report()["max_local_bsz"]
    share = batch_size / num_replicas
    accum = 0
    if limits.accumulation:
        accum = math.ceil(share / max_local - SPLIT_EPS) - 1
        if num_replicas == 1 and (accumulate_on_one or batch_size > limits.init_batch_size + SPLIT_EPS):
            accum = max(1, accum)
    return BatchConfig(math.ceil(share / (accum + 1) - SPLIT_EPS), accum)


def split_fixed_batch(limits: BatchLimits, batch_size: float, num_replicas: int) -> BatchConfig:
    """Port of splitFixedBatch in src/goodput/batch-split.ts (the shared cases' `fixed` half):
    split_batch, then the micro-batch rounded down where rounding up would take the total past
    max_batch_size, and within max_local_bsz when accumulation is off."""
    config = split_batch(limits, batch_size, num_replicas)
    local = min(config.local_bsz,
                limits.max_batch_size // (num_replicas * (config.accum_steps + 1)))
    if not limits.accumulation:
        local = min(local, limits.to_report()["max_local_bsz"])
    return BatchConfig(local, config.accum_steps)


def derive_batch_config(global_batch_size: int, world_size: int, limits: BatchLimits) -> BatchConfig:
    """Splits a global batch over `world_size` replicas by the shared rule (split_fixed_batch):
    never past max_batch_size (512 over 3 replicas is 170 x 3, not 171 x 3), within the memory
    bound when accumulation is off, and at least min_local_bsz per replica. Used until the
    control plane sends a configuration."""
    config = split_fixed_batch(limits, global_batch_size, world_size)
    return BatchConfig(max(config.local_bsz, limits.min_local_bsz), config.accum_steps)
