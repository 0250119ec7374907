"""Test replica: a linear model over 320 samples in batches of 32, each step slowed so that the
reports span many posts. `--epochs N` runs gt.remaining_epochs(N); `--passes N` iterates the
loader N times without declaring the epoch count. Prints DONE samples=..."""

import argparse
import time

import torch
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt

SAMPLES = 320


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--passes", type=int)
    parser.add_argument("--step-sleep-s", type=float, default=0.02)
    args = parser.parse_args()
    torch.set_num_threads(1)
    gt.init()
    torch.manual_seed(0)
    x, y = torch.randn(SAMPLES, 6), torch.randint(0, 3, (SAMPLES,))
    net = torch.nn.Linear(6, 3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    epochs = gt.remaining_epochs(args.epochs) if args.epochs is not None else range(args.passes)
    for _ in epochs:
        for bx, by in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(bx), by).backward()
            optimizer.step()
            time.sleep(args.step_sleep_s)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
