"""Learning-rate scaling rules (pollux-spec.md §3.5).

A rule maps (scale S = current total batch / B0, noise estimator) to the factor by which every
param group's learning rate is multiplied for one optimizer step (then restored). The base LR the
user configured is the LR for batch B0.
"""

import math
from typing import Callable, Dict, Union

from .grad_noise import GradientNoiseEstimator

ScalingRule = Callable[[float, GradientNoiseEstimator], float]


def adascale(scale: float, noise: GradientNoiseEstimator) -> float:
    """AdaScale gain (nu + sigma2)/(nu/S + sigma2): the default for SGD-like optimizers."""
    return noise.gain(scale)


def adamscale(scale: float, noise: GradientNoiseEstimator) -> float:
    """Square root of the AdaScale gain: the default for Adam and AdamW."""
    return math.sqrt(noise.gain(scale))


def linear_scale(scale: float, noise: GradientNoiseEstimator) -> float:
    return scale


def sqrt_scale(scale: float, noise: GradientNoiseEstimator) -> float:
    return math.sqrt(scale)


def no_scale(scale: float, noise: GradientNoiseEstimator) -> float:
    return 1.0


RULES: Dict[str, ScalingRule] = {
    "adascale": adascale,
    "adamscale": adamscale,
    "linear": linear_scale,
    "sqrt": sqrt_scale,
    "none": no_scale,
}

_ADAM_LIKE = {"Adam", "AdamW", "NAdam", "RAdam", "Adamax", "SparseAdam"}


def resolve_rule(rule: Union[str, ScalingRule, None], optimizer: object) -> ScalingRule:
    """`None` picks AdaScale, or its square root for Adam-family optimizers."""
    if rule is None:
        return adamscale if type(optimizer).__name__ in _ADAM_LIKE else adascale
    if callable(rule):
        return rule
    try:
        return RULES[rule]
    except KeyError:
        raise ValueError(f"goodput: unknown lr scaling rule {rule!r}; "
                         f"choose one of {sorted(RULES)} or pass a callable") from None


def rule_name(rule: ScalingRule) -> str:
    """The name the control plane knows a rule by (its report's `lr_rule`); "custom" for a callable."""
    for name, known in RULES.items():
        if rule is known:
            return name
    return "custom"
