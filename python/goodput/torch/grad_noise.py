"""Gradient-noise estimators of pollux-spec.md §3.6, in a form that accepts samples of any size.

Notation: G is the true gradient, tr the trace of the per-sample gradient covariance, B0 the
reference (initial) batch size. A gradient averaged over b samples has E[|g|^2] = |G|^2 + tr/b.

One optimizer step gives two kinds of squared norms:
  * `small_sqr`: the mean over K equal-size "small" samples of |g_k|^2, each of batch `small_batch`
    (one replica's locally accumulated gradient, or one micro-batch);
  * `total_sqr`: |g_bar|^2 of the gradient averaged over `total_batch` samples.
Solving the two expectation equations gives the unbiased estimators

    sigma2 = (total_batch * total_sqr - small_batch * small_sqr) / (total_batch - small_batch)
    nu     = (small_sqr - total_sqr) * small_batch * total_batch / ((total_batch - small_batch) * B0)

which equal the spec's (K*Tt - L)/(K-1) and (L - Tt)*S/(K-1) when total_batch = K*small_batch
(S = total_batch/B0). nu is the noise at the B0 scale (nu = tr/B0), so the AdaScale gain at
scale S is (nu + sigma2)/(nu/S + sigma2).

Smoothing is the spec's bias-corrected EMA with decay 0.999**S, starting from sigma2 = 1, nu = 0.
This module is pure Python (floats in, floats out): the torch side measures, this side decides.
"""

import math
from dataclasses import dataclass
from typing import Optional, Tuple

EMA_BASE_DECAY = 0.999
MIN_NU = 1e-6


def unbiased_estimates(small_sqr: float, small_batch: float, total_sqr: float,
                       total_batch: float, init_batch_size: float) -> Tuple[float, float]:
    """One step's raw (sigma2, nu). Requires total_batch > small_batch > 0."""
    if not total_batch > small_batch > 0:
        raise ValueError(f"need total_batch > small_batch > 0, got {total_batch}, {small_batch}")
    spread = total_batch - small_batch
    sigma2 = (total_batch * total_sqr - small_batch * small_sqr) / spread
    nu = (small_sqr - total_sqr) * small_batch * total_batch / (spread * init_batch_size)
    return sigma2, nu


def adascale_gain(sigma2: float, nu: float, scale: float) -> float:
    """AdaScale r_t = (nu + sigma2)/(nu/S + sigma2), in [1, S] for S >= 1; 1 if undefined."""
    sigma2 = max(sigma2, 0.0)
    nu = max(nu, MIN_NU)
    denominator = nu / scale + sigma2
    if denominator <= 0 or not math.isfinite(denominator):
        return 1.0
    return (nu + sigma2) / denominator


@dataclass
class _Ema:
    """Bias-corrected exponential moving average: estimate = m/u."""
    m: float = 0.0
    u: float = 0.0

    def update(self, value: float, decay: float) -> None:
        self.m = decay * self.m + (1.0 - decay) * value
        self.u = decay * self.u + (1.0 - decay)

    def value(self, initial: float) -> float:
        return self.m / self.u if self.u > 0 else initial


class GradientNoiseEstimator:
    """Smoothed sigma2 (= grad_sqr) and nu (= grad_var) over optimizer steps.

    Invariants: `sigma2` is >= 0 and `nu` >= 1e-6 when read; steps with non-finite inputs are
    skipped; switching from the biased single-sample fallback to real multi-sample estimates
    resets the averages (as in the spec), so biased history never pollutes the unbiased one.
    """

    def __init__(self, init_batch_size: int):
        if init_batch_size <= 0:
            raise ValueError("init_batch_size must be positive")
        self.init_batch_size = init_batch_size
        self._sigma2 = _Ema()
        self._nu = _Ema()
        self._biased = False
        self.updates = 0

    @property
    def is_known(self) -> bool:
        return self.updates > 0

    @property
    def sigma2(self) -> float:
        return max(self._sigma2.value(1.0), 0.0)

    @property
    def nu(self) -> float:
        return max(self._nu.value(0.0), MIN_NU)

    def gain(self, scale: float) -> float:
        return adascale_gain(self.sigma2, self.nu, scale)

    def update(self, small_sqr: float, small_batch: float, total_sqr: float, total_batch: float,
               biased: bool = False, steps: int = 1) -> bool:
        """Adds one step's measurement; returns False (and changes nothing) if it is unusable.
        `steps`: optimizer steps this measurement stands for (measured every `steps` steps), so
        the averaging horizon in steps does not depend on how often the SDK measures."""
        values = (small_sqr, total_sqr, small_batch, total_batch)
        if not all(math.isfinite(v) for v in values) or not total_batch > small_batch > 0:
            return False
        if self._biased and not biased:
            self._sigma2, self._nu = _Ema(), _Ema()
        self._biased = biased
        sigma2, nu = unbiased_estimates(small_sqr, small_batch, total_sqr, total_batch,
                                        self.init_batch_size)
        decay = EMA_BASE_DECAY ** (total_batch / self.init_batch_size * max(1, steps))
        self._sigma2.update(sigma2, decay)
        self._nu.update(nu, decay)
        self.updates += 1
        return True

    def state_dict(self) -> dict:
        return {"init_batch_size": self.init_batch_size, "sigma2": (self._sigma2.m, self._sigma2.u),
                "nu": (self._nu.m, self._nu.u), "biased": self._biased, "updates": self.updates}

    def load_state_dict(self, state: dict) -> None:
        self._sigma2 = _Ema(*state["sigma2"])
        self._nu = _Ema(*state["nu"])
        self._biased = bool(state["biased"])
        self.updates = int(state["updates"])

    def report_values(self) -> Tuple[Optional[float], Optional[float]]:
        """(grad_sqr, grad_var) for the report: None until the first update (contract)."""
        if not self.is_known:
            return None, None
        return self.sigma2, self.nu
