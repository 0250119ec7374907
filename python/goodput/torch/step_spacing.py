"""How often control rounds and gradient-noise measurements happen (rank 0 decides).

Control rounds happen every `round_every` steps and gradient-noise measurements every
`measure_every` steps (a multiple of round_every, so a measurement always rides on a round), both
chosen from host-timed costs. Launching a round costs little, so rounds stay at most
MAX_ROUND_SPACING_S (and MAX_ROUND_EVERY steps) apart, which bounds how late a stop or a new
configuration takes effect. A measuring step gives up DDP's overlap of all-reduce and backward
(measured_sync.py), so measurements are spaced to cost at most MEASURE_BUDGET of the training
time, however slow the steps.
"""

import math
from typing import Optional, Tuple

MEASURE_BUDGET = 0.01
ROUND_BUDGET = 0.005
MAX_ROUND_SPACING_S = 0.5
MAX_ROUND_EVERY = 16
MAX_MEASURE_EVERY = 64

STEP_TIME_WEIGHT = 0.1  # step times: a long average
COST_WEIGHT = 0.2       # round and measuring costs are rarer samples: the newest weighs more


class StepSpacing:
    def __init__(self) -> None:
        self.step_time_ema_s: Optional[float] = None
        self._round_cost_ema_s: Optional[float] = None
        self._measure_cost_ema_s: Optional[float] = None

    def observe_step(self, step_time_s: float) -> None:
        self.step_time_ema_s = smooth(self.step_time_ema_s, step_time_s, STEP_TIME_WEIGHT)

    def observe_round_cost(self, seconds: float) -> None:
        """Host time one control round's launch took."""
        self._round_cost_ema_s = smooth(self._round_cost_ema_s, seconds, COST_WEIGHT)

    def observe_measure_cost(self, seconds: float) -> None:
        """Host time one measuring step spent measuring."""
        self._measure_cost_ema_s = smooth(self._measure_cost_ema_s, seconds, COST_WEIGHT)

    def propose(self) -> Tuple[int, int]:
        """(round_every, measure_every) that keep rounds and measurements within budget."""
        step_s = self.step_time_ema_s
        if not step_s or step_s <= 0:
            return 1, 1
        by_latency = max(1, int(MAX_ROUND_SPACING_S / step_s))
        round_every = max(1, min(MAX_ROUND_EVERY, by_latency,
                                 _steps_within(self._round_cost_ema_s, ROUND_BUDGET, step_s)))
        rounds = math.ceil(_steps_within(self._measure_cost_ema_s, MEASURE_BUDGET, step_s)
                           / round_every)
        return round_every, round_every * max(1, min(rounds, MAX_MEASURE_EVERY // round_every))


def smooth(average: Optional[float], sample: float, weight: float) -> float:
    """Exponential moving average; the first sample starts it."""
    return sample if average is None else (1 - weight) * average + weight * sample


def _steps_within(cost_s: Optional[float], budget: float, step_s: float) -> int:
    """Fewest steps between two occurrences of something costing cost_s that keep it within
    `budget` of the training time."""
    if not cost_s or cost_s <= 0:
        return 1
    return max(1, math.ceil(cost_s / (budget * step_s)))
