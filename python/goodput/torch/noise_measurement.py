"""Gradient-noise measurement of the model wrapped by AdaptiveDataParallel: one sample per
measuring step (|g_local|^2 before the replicas' all-reduce and |g_bar|^2 after it, or the
one-replica variants), the smoothed estimator fed by the control rounds (grad_noise.py), and
what it yields per step: the AdaScale gain and the learning-rate factor of the scaling rule.

Kept apart from the DDP wrapper (parallel.py), which only says when a step is measured and hands
over the squared norms it measured."""

from typing import Any, Optional, Tuple

import torch

from . import compat
from .grad_noise import GradientNoiseEstimator
from .runtime import Runtime
from .scaling_rules import ScalingRule
from .step_types import NoiseSample


class NoiseMeasurement:
    def __init__(self, runtime: Runtime, module: torch.nn.Module, scaler: Optional[Any],
                 rule: ScalingRule):
        self._runtime = runtime
        self.module = module
        self.scaler = scaler
        self._rule = rule
        self.noise: Optional[GradientNoiseEstimator] = None
        #: the estimator's state from the checkpoint, loaded when the estimator is created
        self.saved_state: Optional[dict] = None
        #: one replica, accumulating: |g|^2 of the first micro-batch alone
        self.first_micro_sqr: Optional[torch.Tensor] = None
        self._prev_flat_grad: Optional[torch.Tensor] = None
        self._prev_flat_step = -1

    def wanted(self) -> bool:
        """Noise is measured once a training loader has declared the initial batch size."""
        return self._runtime.init_batch_size is not None

    def state_dict(self) -> Optional[dict]:
        return self.noise.state_dict() if self.noise else self.saved_state

    def note_first_micro_batch(self) -> None:
        """Gradients now hold micro-batch 1 alone: one small sample for the estimator."""
        self.first_micro_sqr = compat.sum_of_squares(
            compat.grads_of(self.module.parameters())).detach()

    def gain(self) -> float:
        """AdaScale gain of this step: the scale-invariant progress it makes."""
        init_batch = self._runtime.init_batch_size
        total_batch = self._runtime.total_batch_size()
        if not init_batch or not total_batch:
            return 1.0
        return self.estimator().gain(total_batch / init_batch)

    def lr_factor(self) -> float:
        init_batch = self._runtime.init_batch_size
        total_batch = self._runtime.total_batch_size()
        if not init_batch or not total_batch:
            return 1.0
        return float(self._rule(total_batch / init_batch, self.estimator()))

    def estimator(self) -> GradientNoiseEstimator:
        if self.noise is None:
            self.noise = GradientNoiseEstimator(self._runtime.init_batch_size or 1)
            if self.saved_state:
                self.noise.load_state_dict(self.saved_state)
        return self.noise

    def _loss_scale_sqr(self) -> Optional[torch.Tensor]:
        if self.scaler is None:
            return None
        scale = compat.scaler_scale_tensor(self.scaler)
        return None if scale is None else scale.float() ** 2

    def sample(self, micro: Optional[Any], micro_count: int,
               measured_sqr: Optional[Tuple[torch.Tensor, torch.Tensor]]) -> Optional[NoiseSample]:
        """This step's sample, or None when the step is not measured or not comparable."""
        runtime = self._runtime
        if not self.wanted() or micro_count == 0 or runtime.batch is None:
            return None
        local_bsz = runtime.batch.local_bsz
        uniform = micro is None or micro.global_count == local_bsz * runtime.world_size
        scale_sqr = self._loss_scale_sqr()
        if runtime.distributed:
            if not uniform or measured_sqr is None:
                return None
            local_sum_sqr, total = measured_sqr
            # |local mean gradient|^2 = |sum over micro-steps|^2 / micro_count^2
            small = local_sum_sqr / (micro_count ** 2)
            small_batch = local_bsz * micro_count
            sample = NoiseSample(small, total, small_batch, small_batch * runtime.world_size)
        else:
            if micro_count > 1:
                if self.first_micro_sqr is None or not uniform:
                    return None
                grads = compat.grads_of(self.module.parameters())
                sample = NoiseSample(self.first_micro_sqr, compat.sum_of_squares(grads),
                                     local_bsz, local_bsz * micro_count)
            else:
                if not runtime.limits or not runtime.limits.adaptive:
                    return None  # fixed batch: the previous-gradient fallback is not worth a copy
                # Spec's K = 1 fallback: this step's gradient and the previous step's. Copies
                # are taken only on the step before a measure step, measured on the measure step.
                step = runtime.steps_done
                measure_step = runtime.is_measure_step()
                before_measure = (step + 1) % runtime.measure_every == 0
                if not (measure_step or before_measure):
                    return None
                grads = compat.grads_of(self.module.parameters())
                flat = torch.cat([g.reshape(-1).float() for g in grads])
                previous, previous_step = self._prev_flat_grad, self._prev_flat_step
                self._prev_flat_grad, self._prev_flat_step = (flat, step) if before_measure \
                    else (None, -1)
                if not measure_step or previous is None or previous_step != step - 1 \
                        or previous.shape != flat.shape or not uniform:
                    return None
                mean = (flat + previous) / 2
                sample = NoiseSample((torch.dot(flat, flat) + torch.dot(previous, previous)) / 2,
                                     torch.dot(mean, mean), local_bsz, 2 * local_bsz, biased=True)
        if scale_sqr is not None:
            sample.small_sqr = sample.small_sqr / scale_sqr
            sample.total_sqr = sample.total_sqr / scale_sqr
        return sample

    def update(self, small_sqr: float, total_sqr: float, small_batch: int,
                      total_batch: int, biased: bool, steps: int) -> None:
        self.estimator().update(small_sqr, small_batch, total_sqr, total_batch, biased, steps)

    def report_values(self) -> Tuple[Optional[float], Optional[float]]:
        return self.noise.report_values() if self.noise else (None, None)
