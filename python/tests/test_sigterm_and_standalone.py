"""Real SIGTERM -> checkpoint at a step boundary -> exit 143 -> resume; standalone and torchrun
launches checkpoint and resume too; the step-breakdown log has the doctor's format."""

import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import PYTHON, PYTHON_DIR, REPO_ROOT, WORKERS_DIR, replica_env, free_port
from goodput.torch.env import EXIT_CHECKPOINTED

DIGITS = os.path.join(REPO_ROOT, "examples", "digits", "train.py")


def _epochs_printed(output: str):
    return [int(m) for m in re.findall(r"^epoch=(\d+) ", output, re.M)]


def _sigterm_all_once(procs, prefix):
    """SIGTERMs every replica once rank 0 printed a line starting with `prefix` (training is
    under way); returns rank 0's lines up to it and every replica's remaining output. A replica
    still running 60 s later is killed, and the test fails on the timeout."""
    try:
        head = []
        for line in procs[0].stdout:
            head.append(line)
            if line.startswith(prefix):
                break
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        return head, [proc.communicate(timeout=60)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_sigterm_checkpoints_exits_143_and_resumes_on_fewer_replicas(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    step_log = str(tmp_path / "steps-{rank}.json")
    port = free_port()
    procs = [subprocess.Popen([PYTHON, DIGITS, "--epochs", "40"], cwd=REPO_ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=replica_env(r, 2, port, {"GOODPUT_CHECKPOINT_DIR": ckpt,
                                                           "GOODPUT_STEP_LOG": step_log}))
             for r in range(2)]
    lines, rest = _sigterm_all_once(procs, "epoch=3 ")
    first_output = "".join(lines) + rest[0]
    assert [p.returncode for p in procs] == [EXIT_CHECKPOINTED] * 2, first_output + rest[1]
    assert not re.search(r"^accuracy=", first_output, re.M)
    stopped_after = max(_epochs_printed(first_output))
    assert 3 <= stopped_after < 39

    for rank in (0, 1):  # the doctor's step-breakdown format, one file per rank
        log = json.load(open(str(tmp_path / f"steps-{rank}.json")))
        assert log["kind"] == "goodput.step_breakdown" and log["job"] == "local"
        assert len(log["steps"]) > 50
        step = log["steps"][-1]
        assert set(step) == {"rank", "step", "data_wait_s", "forward_backward_s", "sync_s",
                             "optimizer_s", "between_steps_s"} and step["rank"] == rank
        assert all(step[k] >= 0 for k in step)
        assert sum(s["sync_s"] for s in log["steps"]) > 0  # two replicas: real all-reduce time

    # Relaunch alone (the control plane shrank the job): it resumes mid-training, not at 0.
    resumed = subprocess.run([PYTHON, DIGITS, "--epochs", "40"], cwd=REPO_ROOT, text=True,
                             capture_output=True, timeout=120,
                             env=replica_env(0, 1, free_port(), {"GOODPUT_CHECKPOINT_DIR": ckpt}))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    epochs = _epochs_printed(resumed.stdout)
    assert epochs[0] in (stopped_after, stopped_after + 1) and epochs[-1] == 39, epochs
    accuracy = float(re.findall(r"^accuracy=([0-9.]+)$", resumed.stdout, re.M)[-1])
    assert accuracy >= 0.95


@pytest.mark.skipif(shutil.which("torchrun") is None, reason="torchrun is not installed")
def test_torchrun_then_plain_python_resume_with_fixed_batch(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    env.update(GOODPUT_CHECKPOINT_DIR=str(tmp_path), OMP_NUM_THREADS="1",
               PYTHONPATH=PYTHON_DIR)
    port = str(free_port())
    # --redirects/--tee: Debian's torch 1.13 under Python 3.11 crashes on their default "0"
    # (Std.NONE is no longer iterable in 3.11's Flag enums); 1 = stdout is a valid value.
    first = subprocess.run(["torchrun", "--nproc_per_node=2", "--master_port", port,
                            "--redirects", "1", "--tee", "1", DIGITS,
                            "--epochs", "3"], cwd=REPO_ROOT, env=env, text=True,
                           capture_output=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    assert _epochs_printed(re.sub(r"^\[[^\]]*\]:", "", first.stdout, flags=re.M)) == [0, 1, 2]
    assert "replicas=2 local_bsz=32" in first.stdout  # fixed batch 64 split over 2
    second = subprocess.run([PYTHON, DIGITS, "--epochs", "5"], cwd=REPO_ROOT, env=env, text=True,
                            capture_output=True, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    assert _epochs_printed(second.stdout) == [3, 4]  # continued where torchrun's run stopped
    assert "replicas=1 local_bsz=64" in second.stdout


@pytest.mark.parametrize("own_group", [True, False], ids=["script-creates-group", "sdk-creates-group"])
def test_a_stop_exits_143_when_the_script_destroys_the_group_in_finally(tmp_path, own_group):
    # torchrun scripts tear down with `finally: dist.destroy_process_group()`. SystemExit(143)
    # runs that finally; had the SDK destroyed the group before exiting, torch's assertion would
    # turn the checkpointed stop into exit 1 with a traceback on every rank.
    worker = os.path.join(WORKERS_DIR, "cleanup_finally_worker.py")
    port = free_port()
    procs = [subprocess.Popen([PYTHON, worker], text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              env=replica_env(r, 2, port, {"OWN_GROUP": "1" if own_group else "0",
                                                           "GOODPUT_CHECKPOINT_DIR": str(tmp_path)}))
             for r in range(2)]
    head, outputs = _sigterm_all_once(procs, "step=40")
    joined = "".join(head) + outputs[0] + "\n---- rank 1 ----\n" + outputs[1]
    assert [p.returncode for p in procs] == [EXIT_CHECKPOINTED] * 2, joined
    assert "Traceback" not in joined, joined
    assert re.search(r"checkpointed step \d+ to ", outputs[0]), joined
