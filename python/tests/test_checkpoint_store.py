"""Atomic checkpoint files: kill -9 in the middle of a write leaves the previous one loadable."""

import os
import signal
import subprocess
import textwrap
import time

import torch

from conftest import PYTHON, PYTHON_DIR
from goodput.torch.checkpoint_store import CheckpointStore

WRITER = textwrap.dedent("""
    import sys, torch
    from goodput.torch.checkpoint_store import CheckpointStore
    store = CheckpointStore(sys.argv[1])
    store.save({"step": 1, "weights": torch.arange(10.0)})
    print("first-saved", flush=True)
    # ~400 MB: the write takes long enough to be killed half-way
    store.save({"step": 2, "weights": torch.ones(100_000_000)})
    print("second-saved", flush=True)
""")


def test_kill_9_during_write_keeps_previous_checkpoint(tmp_path):
    directory = str(tmp_path)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    proc = subprocess.Popen([PYTHON, "-c", WRITER, directory], env=env, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "first-saved"
        deadline = time.monotonic() + 60
        temp = []
        while time.monotonic() < deadline:
            temp = [n for n in os.listdir(directory) if n.startswith(".ckpt-tmp-")]
            if temp and os.path.getsize(os.path.join(directory, temp[0])) > 1_000_000:
                break
            time.sleep(0.002)
        assert temp, "the second checkpoint never started writing"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    names = sorted(os.listdir(directory))
    assert "ckpt-000000000.pt" in names and "ckpt-000000001.pt" not in names, names
    record, path = CheckpointStore(directory).load_latest()
    assert record["step"] == 1 and torch.equal(record["weights"], torch.arange(10.0))
    # The next save cleans the torn temp file up and becomes the newest checkpoint.
    CheckpointStore(directory).save({"step": 3})
    assert not [n for n in os.listdir(directory) if n.startswith(".ckpt-tmp-")]
    assert CheckpointStore(directory).load_latest()[0]["step"] == 3


def test_torn_newest_file_falls_back_to_previous(tmp_path):
    store = CheckpointStore(str(tmp_path))
    store.save({"step": 1})
    store.save({"step": 2})
    newest = os.path.join(str(tmp_path), "ckpt-000000001.pt")
    with open(newest, "r+b") as f:
        f.truncate(os.path.getsize(newest) // 2)
    record, path = store.load_latest()
    assert record["step"] == 1 and path.endswith("ckpt-000000000.pt")


def test_keeps_exactly_latest_and_previous(tmp_path):
    store = CheckpointStore(str(tmp_path))
    for step in range(5):
        store.save({"step": step})
    assert sorted(os.listdir(str(tmp_path))) == ["ckpt-000000003.pt", "ckpt-000000004.pt"]
    assert store.load_latest()[0]["step"] == 4
    assert CheckpointStore(str(tmp_path / "missing")).load_latest() is None


def test_checkpoints_with_numpy_rng_state_load_where_torch_defaults_to_weights_only(tmp_path, monkeypatch):
    """torch >= 2.6 loads with weights_only=True unless told otherwise; a checkpoint holding
    numpy RNG state (as every SDK checkpoint does) must still load, or the job restarts at 0."""
    import numpy as np

    store = CheckpointStore(str(tmp_path))
    store.save({"step": 7, "numpy_rng": np.random.get_state()})
    real_load = torch.load

    def strict_by_default(path, map_location=None, weights_only=True, **kwargs):
        return real_load(path, map_location=map_location, weights_only=weights_only, **kwargs)

    monkeypatch.setattr(torch, "load", strict_by_default)
    loaded = store.load_latest()
    assert loaded is not None, "the SDK's own checkpoint was skipped as unreadable"
    assert loaded[0]["step"] == 7
