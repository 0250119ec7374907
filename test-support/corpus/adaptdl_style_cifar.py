"""A CIFAR-style image classifier written the way AdaptDL's examples are: an adaptive loader
with two worker processes and drop_last, a small CNN with SGD, momentum and a step LR schedule,
and train/validation statistics summed over the replicas with an Accumulator.

The images are generated here (no download): 32x32 RGB pictures of ten classes, each class a
coloured stripe pattern at its own angle plus noise, so that a small CNN learns them in a few
epochs. Run alone (`python adaptdl_style_cifar.py`), with torchrun, or under `goodput submit`.
"""

import argparse
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import goodput.torch as gt  # noqa: E402


class StripedImages(Dataset):
    """`count` images of `classes` classes, reproducible from `seed`; built lazily per item so
    that the loader's workers do the work."""

    def __init__(self, count: int, seed: int, classes: int = 10):
        self.count, self.seed, self.classes = count, seed, classes
        grid = torch.arange(32, dtype=torch.float32)
        self.yy, self.xx = torch.meshgrid(grid, grid, indexing="ij")

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        label = index % self.classes
        angle = math.pi * label / self.classes
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        phase = torch.rand(1, generator=g).item() * 6.28
        wave = torch.sin((self.xx * math.cos(angle) + self.yy * math.sin(angle)) / 3 + phase)
        colour = torch.tensor([(label % 3) / 2, (label % 5) / 4, (label % 2) * 1.0]).view(3, 1, 1)
        image = wave.unsqueeze(0) * (0.5 + colour) + 0.3 * torch.randn(3, 32, 32, generator=g)
        return image, label


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--train-size", type=int, default=2000)
    parser.add_argument("--bs", type=int, default=64, help="global batch size")
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runtime = gt.init()
    print(f"start step={runtime.steps_done} attempt={runtime.env.attempt} "
          f"replicas={gt.world_size()}", flush=True)

    trainset = StripedImages(args.train_size, seed=1)
    validset = StripedImages(400, seed=2)
    trainloader = gt.AdaptiveDataLoader(trainset, batch_size=args.bs, shuffle=True,
                                        num_workers=2, drop_last=True,
                                        max_batch_size=4 * args.bs, local_bsz_bounds=(16, 128))
    validloader = gt.AdaptiveDataLoader(validset, batch_size=100, shuffle=False, num_workers=2,
                                        train=False)

    torch.manual_seed(0)
    net = SmallNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [args.epochs // 2], 0.1)
    net = gt.AdaptiveDataParallel(net, optimizer, scheduler)

    for epoch in gt.remaining_epochs(args.epochs):
        stats = gt.Accumulator()
        net.train()
        for inputs, targets in trainloader:
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = F.cross_entropy(outputs, targets)
            loss.backward()
            optimizer.step()
            stats["loss_sum"] += loss.item() * targets.size(0)
            stats["correct"] += (outputs.argmax(1) == targets).sum().item()
            stats["total"] += targets.size(0)
            if runtime.steps_done % 10 == 0 and gt.rank() == 0:
                print(f"epoch={epoch} step={runtime.steps_done}", flush=True)
        with stats.synchronized():
            if gt.rank() == 0:
                print(f"train epoch={epoch} loss={stats['loss_sum'] / stats['total']:.3f} "
                      f"accuracy={stats['correct'] / stats['total']:.3f}", flush=True)
            stats.clear()
        net.eval()
        with torch.no_grad():
            for inputs, targets in validloader:
                outputs = net(inputs)
                stats["correct"] += (outputs.argmax(1) == targets).sum().item()
                stats["total"] += targets.size(0)
        with stats.synchronized():
            if gt.rank() == 0:
                print(f"valid epoch={epoch} accuracy={stats['correct'] / stats['total']:.3f}",
                      flush=True)
        scheduler.step()
    print(f"done step={runtime.steps_done}", flush=True)


if __name__ == "__main__":
    main()
