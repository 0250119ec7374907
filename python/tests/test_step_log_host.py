"""The step log carries the host's CPU threads (cores, torch threads, local processes, loader
workers) that `goodput doctor` needs to see thread oversubscription; real training processes."""

import json
import os
import subprocess

from conftest import PYTHON, PYTHON_DIR

# A short real training loop: the thread count is set after init(), as users often do, and the
# training loader has one worker.
TRAIN = """
import sys, torch
import goodput.torch as gt
gt.init()
torch.set_num_threads(int(sys.argv[1]))
net = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
model = gt.AdaptiveDataParallel(net, opt)
data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
loader = gt.AdaptiveDataLoader(data, batch_size=16, num_workers=int(sys.argv[2]))
for x, y in loader:
    opt.zero_grad()
    model.backward(torch.nn.functional.cross_entropy(model(x), y))
    opt.step()
"""


def _train(tmp_path, threads, workers, env_extra, cpus=None):
    log = tmp_path / "steps.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    env.update({"GOODPUT_STEP_LOG": str(log), "GOODPUT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
                "PYTHONPATH": PYTHON_DIR}, **env_extra)
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    done = subprocess.run([PYTHON, "-c", TRAIN, str(threads), str(workers)], env=env,
                          capture_output=True, text=True, timeout=120, preexec_fn=pre)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.load(open(log))


def test_host_threads_are_written_with_the_steps(tmp_path):
    log = _train(tmp_path, threads=7, workers=1, env_extra={"LOCAL_WORLD_SIZE": "3"})
    assert log["kind"] == "goodput.step_breakdown" and len(log["steps"]) == 4
    assert log["host"] == {"cpu_count": len(os.sched_getaffinity(0)), "torch_threads": 7,
                           "local_processes": 3, "dataloader_workers": 1}


def test_cpu_count_is_the_affinity_mask_not_the_machine(tmp_path):
    log = _train(tmp_path, threads=2, workers=0, env_extra={}, cpus={0})
    assert log["host"] == {"cpu_count": 1, "torch_threads": 2, "local_processes": 1,
                           "dataloader_workers": 0}
