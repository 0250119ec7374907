"""Capture and restore of the random number generators a training script uses."""

import random
from typing import Any, Dict

import torch

try:  # numpy is optional for the SDK
    import numpy as _np
except ImportError:  # pragma: no cover - Debian's python3-torch depends on numpy
    _np = None


def capture_rng() -> Dict[str, Any]:
    state: Dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if _np is not None:
        state["numpy"] = _np.random.get_state()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def restore_rng(state: Dict[str, Any]) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if _np is not None and "numpy" in state:
        _np.random.set_state(state["numpy"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


def reseed_for_new_rank(base_state: Dict[str, Any], rank: int) -> None:
    """For a rank that did not exist before a rescale: rank 0's state, then a rank-specific seed."""
    restore_rng(base_state)
    seed = int(torch.randint(0, 2**31 - 1, (1,)).item()) + rank
    random.seed(seed)
    torch.manual_seed(seed)
    if _np is not None:
        _np.random.seed(seed % (2**32))
