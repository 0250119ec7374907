"""Checkpoint-restart across world sizes 2 -> 1 -> 3 with real gloo process groups."""

import glob
import os
from collections import Counter

import torch

from conftest import WORKERS_DIR
from goodput.torch.env import EXIT_CHECKPOINTED

WORKER = os.path.join(WORKERS_DIR, "index_worker.py")
DATASET_LEN = 1200
BATCH = 30  # divisible by 1, 2 and 3 replicas, and divides DATASET_LEN: no partial steps


def _seen(out_dir: str, attempt: int):
    """(epoch, index) pairs trained on in one attempt, over all its ranks."""
    pairs = []
    for path in glob.glob(os.path.join(out_dir, f"seen-a{attempt}-r*.txt")):
        for line in open(path):
            epoch, *indices = line.split()
            pairs += [(int(epoch), int(i)) for i in indices]
    return pairs


def _assert_same_state(a: dict, b: dict) -> None:
    for key, tensor in a["module"].items():
        assert torch.equal(tensor, b["module"][key]), key
    for key, state in a["optimizer"]["state"].items():
        assert torch.equal(state["momentum_buffer"],
                           b["optimizer"]["state"][key]["momentum_buffer"]), key
    assert tuple(a["epoch_position"]) == tuple(b["epoch_position"])
    assert a["steps"] == b["steps"]


def test_restart_2_to_1_to_3_resumes_exactly(launch, tmp_path):
    out_dir, ckpt_dir = str(tmp_path / "out"), str(tmp_path / "ckpt")
    os.makedirs(out_dir)
    plan = [(2, 3), (1, None), (3, 0)]  # (world size, stop at global step; 0 = never)
    for attempt, (world, stop_at) in enumerate(plan):
        if stop_at is None:  # a few steps after wherever attempt 0 stopped
            stop_at = max(10, torch.load(os.path.join(out_dir, "end-a0-r0.pt"))["steps"] + 3)
        env = {"GOODPUT_CHECKPOINT_DIR": ckpt_dir, "GOODPUT_ATTEMPT": str(attempt)}
        codes, outputs = launch(WORKER, [out_dir, "2", str(BATCH), str(stop_at)], world, env).wait(120)
        expected = EXIT_CHECKPOINTED if stop_at else 0
        assert codes == [expected] * world, "\n".join(outputs)

    # Every rank of attempt a starts exactly where rank 0 of attempt a-1 stopped.
    for attempt in (1, 2):
        previous_end = torch.load(os.path.join(out_dir, f"end-a{attempt - 1}-r0.pt"))
        for rank in range(plan[attempt][0]):
            start = torch.load(os.path.join(out_dir, f"start-a{attempt}-r{rank}.pt"))
            _assert_same_state(previous_end, start)
    # With replicas, the stop is agreed through the control all-reduce, read two rounds later
    # (a round every 1..16 steps); alone, the very next step boundary stops.
    end0 = torch.load(os.path.join(out_dir, "end-a0-r0.pt"))
    assert 3 < end0["steps"] <= 3 + 2 * 16 + 1
    assert tuple(end0["epoch_position"]) == (0, end0["steps"] * BATCH)
    stop_at_1 = max(10, end0["steps"] + 3)
    end1 = torch.load(os.path.join(out_dir, "end-a1-r0.pt"))
    assert end1["steps"] == stop_at_1 and tuple(end1["epoch_position"]) == (0, stop_at_1 * BATCH)

    # Epoch 0 was split over three attempts (2, 1 and 3 replicas): each sample exactly once.
    seen = _seen(out_dir, 0) + _seen(out_dir, 1) + _seen(out_dir, 2)
    epoch0 = Counter(i for e, i in seen if e == 0)
    assert sorted(epoch0) == list(range(DATASET_LEN))
    assert set(epoch0.values()) == {1}, [i for i, n in epoch0.items() if n > 1][:10]
    epoch1 = Counter(i for e, i in seen if e == 1)
    assert sorted(epoch1) == list(range(DATASET_LEN)) and set(epoch1.values()) == {1}
    assert len(glob.glob(os.path.join(ckpt_dir, "ckpt-*.pt"))) == 2  # latest + previous
