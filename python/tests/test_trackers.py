"""The SDK's scalars reach trackers: a registered callback for real (training on digits), a
failing tracker skipped without stopping training, and TensorBoard event files read back when
tensorboard is importable (Debian bookworm does not package it; then that test is skipped)."""

import importlib.util
import json
import os

import pytest

from conftest import WORKERS_DIR
from goodput.torch.trackers import ScalarPublisher, step_scalars, tensorboard_dir

WORKER = os.path.join(WORKERS_DIR, "tracker_worker.py")
KEYS = {"throughput_samples_s", "statistical_efficiency", "goodput", "batch_size", "local_bsz",
        "accum_steps", "replicas", "lr_scale", "progress"}


def _has_tensorboard() -> bool:
    return importlib.util.find_spec("tensorboard") is not None


def test_a_tracker_callback_receives_the_sdk_scalars(launch, tmp_path):
    out = tmp_path / "calls.jsonl"
    codes, outputs = launch(WORKER, [str(out)], extra_env={
        "GOODPUT_SCALARS_INTERVAL_S": "0", "GOODPUT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "GOODPUT_TENSORBOARD": "0"}).wait()
    assert codes == [0], outputs[0]
    assert "tracker bug" in outputs[0] and outputs[0].count("is skipped from now on") == 1
    calls = [json.loads(line) for line in out.read_text().splitlines()]
    steps = int(outputs[0].split("DONE steps=")[1].split()[0])
    assert len(calls) >= steps - 2, "every step but the first publishes with interval 0"
    assert [c["step"] for c in calls] == sorted(c["step"] for c in calls)
    for c in calls:
        assert KEYS <= set(c), set(c)
        assert c["batch_size"] == c["local_bsz"] * (c["accum_steps"] + 1) * c["replicas"] == 64
        assert 0 < c["statistical_efficiency"] <= 1 and c["lr_scale"] >= 1
        assert c["throughput_samples_s"] > 0
        assert c["goodput"] == pytest.approx(c["throughput_samples_s"] * c["statistical_efficiency"])
    assert any("grad_var" in c and "gradient_noise_scale" in c for c in calls), \
        "gradient noise appears once measured"


def test_publication_is_rate_limited_and_throughput_spans_the_interval():
    now = [0.0]
    publisher = ScalarPublisher(active=True, interval_s=5.0, clock=lambda: now[0])
    seen = []
    publisher.add(lambda step, scalars: seen.append(step))
    assert publisher.due(0) is None, "the first step starts the clock"
    now[0] = 4.0
    assert publisher.due(400) is None
    now[0] = 5.0
    assert publisher.due(500) == 5.0
    publisher.publish(7, 500, {})
    assert seen == [7] and publisher.last_samples == 500
    scalars = step_scalars(samples=500, elapsed_s=5.0, local_bsz=32, accum_steps=1, replicas=2,
                           init_batch_size=64, gain=1.5, lr_scale=1.5, grad_sqr=1.0, grad_var=4.0,
                           progress=3.0)
    assert scalars["throughput_samples_s"] == 100 and scalars["batch_size"] == 128
    assert scalars["statistical_efficiency"] == 0.75 and scalars["goodput"] == 75
    assert scalars["gradient_noise_scale"] == 256
    assert not ScalarPublisher(active=False).due(0), "ranks other than 0 publish nothing"


def test_tensorboard_directory_choice():
    assert tensorboard_dir({}, "/jobs/ab/checkpoint", True) == "/jobs/ab/tensorboard"
    assert tensorboard_dir({}, "/tmp/ckpt", False) is None
    assert tensorboard_dir({"GOODPUT_TENSORBOARD_DIR": "/tb"}, "/c", False) == "/tb"
    assert tensorboard_dir({"GOODPUT_TENSORBOARD": "0"}, "/jobs/ab/checkpoint", True) is None


@pytest.mark.skipif(not _has_tensorboard(),
                    reason="tensorboard is not importable (Debian bookworm has no tensorboard "
                           "package and PyPI is out of reach here); the callback path above is "
                           "what TensorBoardTracker plugs into")
def test_tensorboard_event_files_read_back(launch, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tb = tmp_path / "tb"
    codes, outputs = launch(WORKER, [str(tmp_path / "calls.jsonl")], extra_env={
        "GOODPUT_SCALARS_INTERVAL_S": "0", "GOODPUT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "GOODPUT_TENSORBOARD_DIR": str(tb)}).wait()
    assert codes == [0], outputs[0]
    events = EventAccumulator(str(tb))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {f"goodput/{k}" for k in KEYS} <= tags, tags
    assert all(e.value == 64 for e in events.Scalars("goodput/batch_size"))
