"""Checks of the SDK's GPU paths on one GPU, for a machine with CUDA (about a minute).

    /usr/bin/python3 bench/gpu_check.py            # prints one PASS/FAIL/SKIP line per check

Checks:
  nccl        a NCCL process group of world size 1: an all_reduce on the GPU, then the SDK's
              init() and one training step reusing that group;
  amp         AdaptiveDataParallel(amp=True): fp16 autocast with the GradScaler on CUDA, loss
              falls over 60 steps, the loss scale is finite and checkpointed;
  stop        an SDK replica (2 DataLoader workers, amp on CUDA) gets SIGTERM on its whole
              process group mid-epoch, exits 143 with a checkpoint, and the relaunch resumes at
              the checkpointed step. Runs on the CPU when there is no CUDA (that path is tested
              in python/tests/test_gpu_check.py).
Without CUDA the GPU checks print SKIP with the reason. Exit status: 1 if any check failed.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def result(name: str, status: str, detail: str) -> bool:
    print(f"{status} {name}: {detail}", flush=True)
    return status != "FAIL"


def child_env(checkpoint_dir: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    env.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()),
               GOODPUT_CHECKPOINT_DIR=checkpoint_dir, OMP_NUM_THREADS="1")
    return env


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_child(mode: str, checkpoint_dir: str, timeout_s: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, __file__, "--child", mode], env=child_env(checkpoint_dir),
                          text=True, capture_output=True, timeout=timeout_s)


# ---- children (each a fresh process: the SDK's init() is once per process) ----------------

def child_nccl() -> None:
    import torch
    import torch.distributed as dist
    dist.init_process_group("nccl", init_method="env://", rank=0, world_size=1)
    value = torch.ones(4, device="cuda")
    dist.all_reduce(value)
    assert value.sum().item() == 4.0, value
    import goodput.torch as gt
    gt.init()
    net = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    model = gt.AdaptiveDataParallel(net, opt)
    loss = model(torch.randn(16, 8, device=gt.device())).square().mean()
    loss.backward()
    opt.step()
    print(f"OK device={gt.device()} backend={dist.get_backend()}", flush=True)


def child_amp() -> None:
    import torch
    import torch.nn.functional as F
    import goodput.torch as gt
    gt.init()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    model = gt.AdaptiveDataParallel(net, opt, amp=True)
    assert model.scaler is not None, "amp=True on CUDA must create a GradScaler"
    x = torch.randn(512, 32, device=gt.device())
    y = (x[:, :4].argmax(1)).to(gt.device())
    losses = []
    for _ in range(60):
        opt.zero_grad()
        out = model(x)
        assert out.dtype == torch.float16, out.dtype
        loss = F.cross_entropy(out.float(), y)
        model.backward(loss)
        opt.step()
        losses.append(loss.item())
    scale = float(model.scaler.get_scale())
    assert losses[-1] < 0.7 * losses[0], (losses[0], losses[-1])
    assert 0 < scale < float("inf"), scale
    gt.checkpoint()
    print(f"OK loss {losses[0]:.3f} -> {losses[-1]:.3f} scale={scale:g}", flush=True)


def child_train() -> None:
    import torch
    import torch.nn.functional as F
    from torch.utils.data import Dataset
    import goodput.torch as gt

    class Slow(Dataset):
        def __len__(self) -> int:
            return 4096

        def __getitem__(self, i: int):
            time.sleep(0.001)
            g = torch.Generator().manual_seed(i)
            x = torch.randn(16, generator=g)
            return x, int(x[0] > 0)

    runtime = gt.init()
    print(f"start step={runtime.steps_done}", flush=True)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    cuda = gt.device().type == "cuda"
    model = gt.AdaptiveDataParallel(net, opt, amp=cuda)
    loader = gt.AdaptiveDataLoader(Slow(), batch_size=32, shuffle=True, num_workers=2)
    for _ in gt.remaining_epochs(2):
        for x, y in loader:
            opt.zero_grad()
            model.backward(F.cross_entropy(model(x.to(gt.device())).float(), y.to(gt.device())))
            opt.step()
            print(f"step={runtime.steps_done}", flush=True)
    print("DONE", flush=True)


# ---- checks ------------------------------------------------------------------------------

def check_stop(tmp: str) -> bool:
    ckpt = os.path.join(tmp, "stop")
    proc = subprocess.Popen([sys.executable, __file__, "--child", "train"], env=child_env(ckpt),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.strip() == "step=20":
                os.killpg(proc.pid, signal.SIGTERM)  # main process and DataLoader workers
                break
        out = "".join(lines) + proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    saved = re.search(r"checkpointed step (\d+)", out)
    if proc.returncode != 143 or saved is None:
        return result("stop", "FAIL", f"exit {proc.returncode}, expected 143 with a checkpoint:\n"
                      + out[-1500:])
    resumed = run_child("train", ckpt)
    start = re.search(r"^start step=(\d+)$", resumed.stdout, re.M)
    if resumed.returncode != 0 or start is None or start.group(1) != saved.group(1):
        return result("stop", "FAIL", f"relaunch exit {resumed.returncode}, resumed at "
                      f"{start and start.group(1)} instead of {saved.group(1)}:\n"
                      + (resumed.stdout + resumed.stderr)[-1500:])
    return result("stop", "PASS", f"SIGTERM to the group at step 20 -> exit 143, checkpoint at "
                  f"step {saved.group(1)}, relaunch resumed there and finished")


def check_child(name: str, tmp: str) -> bool:
    done = run_child(name, os.path.join(tmp, name))
    ok = done.returncode == 0 and "OK " in done.stdout
    detail = done.stdout.strip().splitlines()[-1] if ok else \
        f"exit {done.returncode}:\n{(done.stdout + done.stderr)[-1500:]}"
    return result(name, "PASS" if ok else "FAIL", detail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", choices=["nccl", "amp", "train"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        {"nccl": child_nccl, "amp": child_amp, "train": child_train}[args.child]()
        return 0
    import torch
    start_s = time.monotonic()
    cuda = torch.cuda.is_available() and torch.cuda.device_count() > 0
    print(f"torch {torch.__version__}, CUDA: "
          f"{torch.cuda.get_device_name(0) if cuda else 'none'}", flush=True)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("nccl", "amp"):
            if not cuda:
                result(name, "SKIP", "no CUDA device")
            elif name == "nccl" and not torch.distributed.is_nccl_available():
                ok = result(name, "FAIL", "torch was built without NCCL") and ok
            else:
                ok = check_child(name, tmp) and ok
        ok = check_stop(tmp) and ok
    print(f"{'PASS' if ok else 'FAIL'} all: {time.monotonic() - start_s:.0f} s "
          f"({'GPU' if cuda else 'CPU only, GPU checks skipped'})", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
