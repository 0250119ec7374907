"""Test replica whose data comes through DataLoader worker processes: a linear model over a data
set whose samples take a little time to load (so that workers are busy when a stop arrives).

    --workers N          num_workers of the loader (default 2)
    --persistent         persistent_workers=True
    --pin-memory         pin_memory=True (a pin-memory thread in the main process)
    --plain-loader       a plain torch DataLoader (not the SDK's) feeds the training steps
    --spawn              workers started with the spawn method
    --epochs N           gt.remaining_epochs(N)
    --stall-first-worker FILE  the first worker forked (FILE absent) hangs before it starts, with
                         the stop signals blocked, as a worker deadlocked after the fork does

Prints `start step=<steps restored>` first and `step=<n>` after every optimizer step (rank 0),
then DONE."""

import argparse
import os
import signal
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

import goodput.torch as gt
from goodput.torch.worker_signals import WorkerInit

SAMPLES = 256


class SlowDataset(Dataset):
    def __init__(self, load_s: float):
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(SAMPLES, 6, generator=generator)
        self.y = torch.randint(0, 3, (SAMPLES,), generator=generator)
        self.load_s = load_s

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, index: int):
        time.sleep(self.load_s)
        return self.x[index], self.y[index]


def stall_first_worker(marker: str) -> None:
    started = WorkerInit.__call__

    def call(self, worker_id: int) -> None:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return started(self, worker_id)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        while True:
            time.sleep(60)

    WorkerInit.__call__ = call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--persistent", action="store_true")
    parser.add_argument("--pin-memory", action="store_true")
    parser.add_argument("--plain-loader", action="store_true")
    parser.add_argument("--spawn", action="store_true", help="the spawn start method")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--load-s", type=float, default=0.002)
    parser.add_argument("--stall-first-worker", metavar="FILE")
    args = parser.parse_args()
    if args.stall_first_worker:
        stall_first_worker(args.stall_first_worker)
    torch.set_num_threads(1)
    runtime = gt.init()
    print(f"start step={runtime.steps_done}", flush=True)
    torch.manual_seed(0)
    net = torch.nn.Linear(6, 3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    model = gt.AdaptiveDataParallel(net, optimizer)
    dataset = SlowDataset(args.load_s)
    kwargs = dict(num_workers=args.workers, pin_memory=args.pin_memory)
    if args.workers > 0:
        kwargs["persistent_workers"] = args.persistent
        if args.spawn:
            kwargs["multiprocessing_context"] = "spawn"
    if args.plain_loader:
        loader = DataLoader(dataset, batch_size=16, shuffle=True, **kwargs)
    else:
        loader = gt.AdaptiveDataLoader(dataset, batch_size=16, shuffle=True, **kwargs)
    for _ in gt.remaining_epochs(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
            if gt.rank() == 0:
                print(f"step={runtime.steps_done}", flush=True)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
