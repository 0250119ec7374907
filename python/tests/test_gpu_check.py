"""bench/gpu_check.py on a machine without CUDA: the GPU checks say SKIP with the reason, the
stop check runs on the CPU and passes, and the whole script stays within its 2-minute budget."""

import os
import subprocess
import time

import pytest
import torch

from conftest import PYTHON, REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "bench", "gpu_check.py")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: run the script itself")
def test_without_cuda_gpu_checks_skip_and_the_stop_check_passes_on_cpu():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    start_s = time.monotonic()
    done = subprocess.run([PYTHON, SCRIPT], cwd=REPO_ROOT, env=env, text=True,
                          capture_output=True, timeout=120)
    elapsed_s = time.monotonic() - start_s
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "SKIP nccl: no CUDA device" in lines and "SKIP amp: no CUDA device" in lines
    assert any(line.startswith("PASS stop: SIGTERM to the group at step 20 -> exit 143")
               for line in lines), done.stdout
    assert lines[-1].startswith("PASS all:") and elapsed_s < 120
