"""Measuring steps all-reduce the gradients themselves (measured_sync.py); ordinary steps are
plain DDP. Both leave the same averaged gradients, and the step breakdown's sync time of
ordinary steps is estimated from the measuring steps (sync_estimate.py)."""

import os

from conftest import WORKERS_DIR
from goodput.torch.sync_estimate import SyncTimeEstimate

SYNC_WORKER = os.path.join(WORKERS_DIR, "sync_worker.py")


def test_gradients_averaged_on_measuring_and_ordinary_steps(launch, tmp_path):
    codes, outputs = launch(SYNC_WORKER, [], 2, {"GOODPUT_CHECKPOINT_DIR": str(tmp_path)}).wait(90)
    assert codes == [0, 0], "\n".join(outputs)
    assert all("SYNC OK" in out for out in outputs)


def test_sync_estimate_is_the_slowdown_of_ordinary_steps():
    estimate = SyncTimeEstimate()
    assert estimate.overlapped(0.090) == 0.0  # nothing measured yet (a warm-up step: skipped)
    estimate.measured(0.050, 0.004)  # warm-up step: skipped, but its all-reduce time stands in
    assert estimate.overlapped(0.010) == 0.004
    for _ in range(50):
        for _ in range(10):
            estimate.overlapped(0.010)
        estimate.measured(0.008, 0.004)
    assert abs(estimate.overlapped(0.010) - 0.002) < 1e-9  # 10 ms with the all-reduce vs 8 without
    for _ in range(50):  # twice as slow now: compared with recent steps, not stale averages
        for _ in range(20):
            estimate.overlapped(0.020)
        estimate.measured(0.016, 0.008)
    assert abs(estimate.overlapped(0.020) - 0.004) < 1e-6
    estimate.reset()
    assert estimate.overlapped(0.010) == 0.008  # new configuration: back to the stand-in
    for _ in range(50):
        for _ in range(10):
            estimate.overlapped(0.010)
        estimate.measured(0.012, 0.004)
    assert estimate.overlapped(0.010) == 0.0  # never negative
