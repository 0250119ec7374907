"""The CNN example trains with AdamW (square-root AdaScale) and bf16 autocast on CPU (--amp)."""

import os
import re
import subprocess

from conftest import PYTHON, REPO_ROOT, replica_env, free_port

CNN = os.path.join(REPO_ROOT, "examples", "cnn", "train.py")


def test_cnn_example_with_bf16_autocast_learns(tmp_path):
    result = subprocess.run([PYTHON, CNN, "--amp", "--epochs", "4", "--train-size", "2000"],
                            cwd=REPO_ROOT, text=True, capture_output=True, timeout=180,
                            env=replica_env(0, 1, free_port(),
                                            {"GOODPUT_CHECKPOINT_DIR": str(tmp_path)}))
    assert result.returncode == 0, result.stdout + result.stderr
    accuracy = float(re.findall(r"^accuracy=([0-9.]+)$", result.stdout, re.M)[-1])
    assert accuracy >= 0.85, result.stdout  # 4 balanced classes: chance is 0.25
