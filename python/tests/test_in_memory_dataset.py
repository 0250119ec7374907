"""Issue 52: the live doctor told a job on an in-memory TensorDataset to "raise num_workers". The
SDK's reports now say when the training loader reads tensors already in memory (no loader I/O)."""

import json
import os
import subprocess

from conftest import PYTHON, PYTHON_DIR

PROBE = """
import json, sys, torch
import goodput.torch as gt
gt.init()
class Disk(torch.utils.data.Dataset):
    def __len__(self): return 64
    def __getitem__(self, i): return torch.randn(8), 0
tensors = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.zeros(64, dtype=torch.long))
data = {"tensors": tensors, "subset": torch.utils.data.Subset(tensors, range(32)), "disk": Disk()}[sys.argv[1]]
gt.AdaptiveDataLoader(data, batch_size=16)
print(json.dumps(gt.current().step_log.host()))
"""


def _host(kind):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    env["PYTHONPATH"] = PYTHON_DIR
    done = subprocess.run([PYTHON, "-c", PROBE, kind], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_tensor_dataset_is_reported_in_memory():
    assert _host("tensors")["in_memory_dataset"] is True
    assert _host("subset")["in_memory_dataset"] is True


def test_false_friend_a_dataset_that_reads_is_not():
    assert "in_memory_dataset" not in _host("disk")
