"""A regression model trained with the Goodput SDK whose loader keeps two persistent worker
processes (as the SDK does by default on GPU), each sample computed in the worker.

    python sdk_persistent_workers.py --epochs 6
    goodput submit --max-replicas 2 -- python3 sdk_persistent_workers.py
"""

import argparse
import os
import sys

import torch
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import goodput.torch as gt  # noqa: E402


class Polynomial(Dataset):
    """y = a . x + 0.5 sin(3 x_0) + noise, x in [-1, 1]^8; sample i is the same everywhere."""

    def __init__(self, count: int):
        self.count = count
        self.weights = torch.linspace(-1, 1, 8)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        g = torch.Generator().manual_seed(index)
        x = torch.rand(8, generator=g) * 2 - 1
        y = x @ self.weights + 0.5 * torch.sin(3 * x[0]) + 0.05 * torch.randn((), generator=g)
        return x, y.unsqueeze(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--samples", type=int, default=4096)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runtime = gt.init()
    print(f"start step={runtime.steps_done} attempt={runtime.env.attempt} "
          f"replicas={gt.world_size()}", flush=True)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(Polynomial(args.samples), batch_size=64, shuffle=True,
                                   num_workers=2, persistent_workers=True, prefetch_factor=4)
    for epoch in gt.remaining_epochs(args.epochs):
        total, count = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            model.backward(loss)
            optimizer.step()
            total, count = total + loss.item(), count + 1
        if gt.rank() == 0:
            print(f"epoch={epoch} step={runtime.steps_done} mse={total / max(count, 1):.4f}",
                  flush=True)
    print(f"done step={runtime.steps_done}", flush=True)


if __name__ == "__main__":
    main()
