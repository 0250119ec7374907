"""A small SDK training job (torch, gloo on CPU) with one rank made slow on purpose, for the
live verdicts across ranks (bench/doctor-live.ts, src/control/e2e-ranks.test.ts).

    python rank_faults.py --steps 4000 --slow-rank 1 --slow-ms 150 --slow-phase compute

--slow-phase: compute (sleep inside the forward pass), between (after optimizer.step()), data
(the rank's dataset sleeps in __getitem__), hog (a busy thread beside the training thread on the
same rank). A hang is injected from outside (SIGSTOP).
"""

import argparse
import os
import sys
import threading
import time

import torch
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import goodput.torch as gt  # noqa: E402


class Points(Dataset):
    def __init__(self, count: int, delay_s: float):
        self.count = count
        self.delay_s = delay_s
        self.weights = torch.linspace(-1, 1, 16)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        if self.delay_s:
            time.sleep(self.delay_s)
        g = torch.Generator().manual_seed(index)
        x = torch.rand(16, generator=g) * 2 - 1
        return x, (x @ self.weights).unsqueeze(0)


def hog() -> None:
    while True:  # pure Python: holds the GIL in turns with the training thread
        sum(i * i for i in range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--step-ms", type=float, default=40.0, help="compute time of each step")
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--slow-ms", type=float, default=150.0)
    parser.add_argument("--slow-phase", default="compute", choices=["compute", "between", "data", "hog"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    runtime = gt.init()
    me = gt.rank()
    slow = me == args.slow_rank
    print(f"start step={runtime.steps_done} attempt={runtime.env.attempt} rank={me} "
          f"replicas={gt.world_size()} slow={slow and args.slow_phase}", flush=True)
    if slow and args.slow_phase == "hog":
        threading.Thread(target=hog, daemon=True).start()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)
    model = gt.AdaptiveDataParallel(net, optimizer)
    per_sample_s = args.slow_ms / 1000 / 16 if slow and args.slow_phase == "data" else 0.0
    loader = gt.AdaptiveDataLoader(Points(1 << 20, per_sample_s), batch_size=16 * gt.world_size(),
                                   shuffle=True)
    for _epoch in gt.remaining_epochs(1000):
        for x, y in loader:
            optimizer.zero_grad()
            time.sleep(args.step_ms / 1000)  # the model's compute, stood in for by a sleep
            if slow and args.slow_phase == "compute":
                time.sleep(args.slow_ms / 1000)
            loss = torch.nn.functional.mse_loss(model(x), y)
            model.backward(loss)
            optimizer.step()
            if slow and args.slow_phase == "between":
                time.sleep(args.slow_ms / 1000)
            if runtime.steps_done >= args.steps:
                print(f"done step={runtime.steps_done}", flush=True)
                return


if __name__ == "__main__":
    main()
