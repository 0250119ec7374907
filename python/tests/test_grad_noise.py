"""Gradient-noise estimators (pollux-spec §3.6) and the AdaScale gain (§3.3, §3.5)."""

import math

import pytest
import torch

from goodput.torch.grad_noise import (GradientNoiseEstimator, adascale_gain,
                                      unbiased_estimates)
from goodput.torch.scaling_rules import adamscale, adascale, resolve_rule, sqrt_scale

DIM = 64
INIT_BATCH = 32
TRUE_SIGMA2 = 0.8            # |G|^2
TRACE = 40.0                 # trace of the per-sample gradient covariance
TRUE_NU = TRACE / INIT_BATCH  # noise at the reference batch


def _draw(samples_per_draw: int, batch_per_sample: int, draws: int, seed: int):
    """Gradients averaged over `batch_per_sample` samples: G + noise with E|noise|^2 = tr/b."""
    generator = torch.Generator().manual_seed(seed)
    g_true = torch.full((DIM,), math.sqrt(TRUE_SIGMA2 / DIM), dtype=torch.float64)
    std = math.sqrt(TRACE / (DIM * batch_per_sample))
    noise = torch.randn(draws, samples_per_draw, DIM, generator=generator, dtype=torch.float64)
    return g_true + std * noise  # [draws, K, DIM]


def _check_unbiased(sigma2: torch.Tensor, nu: torch.Tensor) -> None:
    # Tolerance: 4 standard errors of the mean over the draws, and within 3% of the truth.
    for values, truth in ((sigma2, TRUE_SIGMA2), (nu, TRUE_NU)):
        mean, stderr = values.mean().item(), values.std().item() / math.sqrt(len(values))
        assert abs(mean - truth) < 4 * stderr, (mean, truth, stderr)
        assert abs(mean - truth) < 0.03 * truth, (mean, truth)


@pytest.mark.parametrize("replicas,local_bsz", [(2, 16), (4, 8), (8, 32)])
def test_replica_estimators_are_unbiased(replicas, local_bsz):
    draws = 20_000
    local = _draw(replicas, local_bsz, draws, seed=replicas)
    small_sqr = (local ** 2).sum(-1).mean(-1)          # L: mean over replicas of |g_k|^2
    total_sqr = (local.mean(1) ** 2).sum(-1)           # Tt = |g_bar|^2
    sigma2, nu = unbiased_estimates(small_sqr, local_bsz, total_sqr, replicas * local_bsz,
                                    INIT_BATCH)
    _check_unbiased(sigma2, nu)
    # Same numbers as the spec's (K*Tt - L)/(K-1) and (L - Tt)*S/(K-1).
    k, scale = replicas, replicas * local_bsz / INIT_BATCH
    assert torch.allclose(sigma2, (k * total_sqr - small_sqr) / (k - 1))
    assert torch.allclose(nu, (small_sqr - total_sqr) * scale / (k - 1))


def test_single_replica_accumulation_estimator_is_unbiased():
    """One replica, 4 micro-batches of 16: the first micro-batch vs the accumulated mean."""
    draws, micro, local_bsz = 20_000, 4, 16
    grads = _draw(micro, local_bsz, draws, seed=7)
    small_sqr = (grads[:, 0] ** 2).sum(-1)
    total_sqr = (grads.mean(1) ** 2).sum(-1)
    sigma2, nu = unbiased_estimates(small_sqr, local_bsz, total_sqr, micro * local_bsz,
                                    INIT_BATCH)
    _check_unbiased(sigma2, nu)


def test_smoothed_estimates_converge_and_skip_bad_input():
    draws = 6000
    local = _draw(4, 16, draws, seed=11)
    estimator = GradientNoiseEstimator(INIT_BATCH)
    assert estimator.report_values() == (None, None)
    assert estimator.sigma2 == 1.0 and estimator.nu == 1e-6  # spec's initial values
    for step in range(draws):
        small = (local[step] ** 2).sum(-1).mean().item()
        total = (local[step].mean(0) ** 2).sum().item()
        assert estimator.update(small, 16, total, 64)
    assert estimator.sigma2 == pytest.approx(TRUE_SIGMA2, rel=0.05)
    assert estimator.nu == pytest.approx(TRUE_NU, rel=0.05)
    before = estimator.state_dict()
    assert not estimator.update(float("inf"), 16, 1.0, 64)  # non-finite: skipped
    assert not estimator.update(1.0, 64, 1.0, 64)           # no second sample size: skipped
    assert estimator.state_dict() == before


def test_ema_decay_is_0_999_power_scale_and_biased_history_is_reset():
    estimator = GradientNoiseEstimator(32)
    estimator.update(2.0, 32, 1.0, 64, biased=True)  # raw sigma2 = 0, nu = 2
    estimator.update(3.0, 32, 1.0, 64, biased=True)  # raw sigma2 = -1, nu = 4
    decay = 0.999 ** 2
    expected_nu = (decay * (1 - decay) * 2 + (1 - decay) * 4) / (decay * (1 - decay) + 1 - decay)
    assert estimator.nu == pytest.approx(expected_nu)
    estimator.update(2.0, 32, 1.0, 64)  # first unbiased sample: the biased history is dropped
    assert estimator.nu == pytest.approx(2.0) and estimator.sigma2 == 0.0


def test_adascale_gain_matches_formula():
    sigma2, nu = 0.573375, 1.454550  # cifar10 B=128, epoch 5 (pollux-spec §3.4)
    for scale in (1.0, 2.0, 4.0, 16.0):
        expected = (nu + sigma2) / (nu / scale + sigma2)
        assert adascale_gain(sigma2, nu, scale) == pytest.approx(expected, rel=1e-12)
        assert 1.0 <= adascale_gain(sigma2, nu, scale) <= scale
    # by hand: 2.027925 / 0.9370125
    assert adascale_gain(sigma2, nu, 4.0) == pytest.approx(2.164245, abs=1e-6)
    assert adascale_gain(0.0, 1e-9, 8.0) == pytest.approx(8.0)   # pure noise: linear scaling
    assert adascale_gain(1.0, 0.0, 8.0) == pytest.approx(1.0, abs=1e-5)  # no noise: no gain
    estimator = GradientNoiseEstimator(128)
    estimator.load_state_dict({"sigma2": (sigma2, 1.0), "nu": (nu, 1.0), "biased": False,
                               "updates": 1, "init_batch_size": 128})
    assert adascale(4.0, estimator) == pytest.approx(adascale_gain(sigma2, nu, 4.0))
    assert adamscale(4.0, estimator) == pytest.approx(math.sqrt(adascale_gain(sigma2, nu, 4.0)))
    assert sqrt_scale(4.0, estimator) == 2.0


def test_default_rule_follows_the_optimizer():
    params = [torch.nn.Parameter(torch.zeros(1))]
    assert resolve_rule(None, torch.optim.SGD(params, lr=0.1)) is adascale
    assert resolve_rule(None, torch.optim.AdamW(params)) is adamscale
    with pytest.raises(ValueError, match="unknown lr scaling rule"):
        resolve_rule("cubic", torch.optim.SGD(params, lr=0.1))
