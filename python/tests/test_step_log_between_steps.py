"""The step log measures the script's own time between steps (after optimizer.step(), before the
next batch), where `loss.item()` / `torch.cuda.synchronize()` / logging sit and where no other
phase looks; real training processes."""

import json
import os
import subprocess

from conftest import PYTHON, PYTHON_DIR

from goodput.torch.report_client import aggregate_steps

# Two passes over the loader: every step waits `wait` seconds after optimizer.step(); between the
# passes the script waits 10x longer (an evaluation), which is not time between steps.
TRAIN = """
import sys, time, torch
import goodput.torch as gt
gt.init()
wait = float(sys.argv[1])
net = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
model = gt.AdaptiveDataParallel(net, opt)
data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
loader = gt.AdaptiveDataLoader(data, batch_size=16)
for epoch in range(2):
    for x, y in loader:
        opt.zero_grad()
        model.backward(torch.nn.functional.cross_entropy(model(x), y))
        opt.step()
        time.sleep(wait)
    time.sleep(10 * wait)
"""


def _train(tmp_path, wait_s):
    log = tmp_path / "steps.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    env.update({"GOODPUT_STEP_LOG": str(log), "GOODPUT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
                "PYTHONPATH": PYTHON_DIR})
    done = subprocess.run([PYTHON, "-c", TRAIN, str(wait_s)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.load(open(log))["steps"]


def test_time_between_steps_is_measured_and_epoch_boundaries_are_not(tmp_path):
    steps = _train(tmp_path, 0.05)
    assert len(steps) == 8
    between = [s["between_steps_s"] for s in steps]
    # The first step of each pass has none (the 0.5 s between the passes is not per-step work).
    assert between[0] == 0.0 and between[4] == 0.0, between
    for s in steps[1:4] + steps[5:]:
        assert 0.05 <= s["between_steps_s"] < 0.2, between
        # The wait is in no other phase.
        assert s["forward_backward_s"] < 0.05 and s["data_wait_s"] < 0.05, s


def test_without_work_between_steps_the_share_is_small(tmp_path):
    steps = _train(tmp_path, 0.0)
    assert all(s["between_steps_s"] < 0.01 for s in steps), steps


def test_report_entries_carry_the_host_threads_of_their_last_step():
    def record(step, threads):
        return {"time_s": 1.0, "step": step, "epoch": 0, "num_nodes": 1, "samples": step,
                "grad_sqr": None, "grad_var": None, "num_replicas": 1, "local_bsz": 8,
                "accum_steps": 0, "step_time_s": 0.1, "sync_time_s": 0.0,
                "host": {"cpu_count": 2, "torch_threads": threads, "local_processes": 1,
                         "dataloader_workers": 0},
                "breakdown": {"data_wait_s": 0.0, "forward_backward_s": 0.1, "sync_s": 0.0,
                              "optimizer_s": 0.0, "between_steps_s": step / 10}}
    entry = aggregate_steps([record(1, 4), record(2, 16)])[0]
    assert entry["host"]["torch_threads"] == 16
    assert abs(entry["breakdown"]["between_steps_s"] - 0.15) < 1e-12
