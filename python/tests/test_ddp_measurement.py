"""The SDK's gradient measurements inside real DDP (gloo) equal a plain re-computation."""

import os

import pytest

from conftest import WORKERS_DIR

PROBE = os.path.join(WORKERS_DIR, "noise_probe_worker.py")


@pytest.mark.parametrize("world_size", [1, 2])
def test_local_and_global_gradient_norms_and_update(launch, tmp_path, world_size):
    env = {"GOODPUT_CHECKPOINT_DIR": str(tmp_path)}
    codes, outputs = launch(PROBE, [], world_size, env).wait(90)
    assert codes == [0] * world_size, "\n".join(outputs)
    assert all("PROBE OK" in out for out in outputs)


def test_single_replica_previous_gradient_fallback(launch, tmp_path):
    worker = os.path.join(WORKERS_DIR, "fallback_worker.py")
    codes, outputs = launch(worker, [], 1, {"GOODPUT_CHECKPOINT_DIR": str(tmp_path)}).wait(90)
    assert codes == [0], outputs[0]
    assert outputs[0].strip().splitlines()[-1].startswith("OK n=")
