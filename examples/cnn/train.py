"""Small CNN on generated 16x16 images (four classes of oriented stripes under noise), trained
with the Goodput SDK. Shows the options a real image job uses: AdamW (square-root AdaScale),
an LR scheduler, mixed precision (`--amp`: fp16 + GradScaler on CUDA, bf16 autocast on CPU) and
`model.backward(loss)`.

    python examples/cnn/train.py [--amp]
    torchrun --nproc_per_node=2 examples/cnn/train.py

The last line printed (rank 0) is `accuracy=<test accuracy>`.
"""

import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import goodput.torch as gt  # noqa: E402

IMAGE_SIZE = 16
NUM_CLASSES = 4


class StripesDataset(Dataset):
    """Deterministic: image i depends only on (seed, i). Class k = stripes at angle k*45 deg with
    a random phase and frequency, plus Gaussian noise."""

    def __init__(self, size: int, seed: int):
        self.size, self.seed = size, seed
        coords = torch.arange(IMAGE_SIZE, dtype=torch.float32)
        self.yy, self.xx = torch.meshgrid(coords, coords, indexing="ij")

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        label = int(torch.randint(0, NUM_CLASSES, (1,), generator=generator))
        angle = label * math.pi / 4
        frequency = 0.6 + 0.4 * float(torch.rand(1, generator=generator))
        phase = 2 * math.pi * float(torch.rand(1, generator=generator))
        wave = torch.sin(frequency * (self.xx * math.cos(angle) + self.yy * math.sin(angle)) + phase)
        noise = 2.0 * torch.randn(IMAGE_SIZE, IMAGE_SIZE, generator=generator)
        return (wave + noise).unsqueeze(0), label


def make_cnn() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, NUM_CLASSES))


def evaluate(model: torch.nn.Module, dataset: Dataset) -> float:
    loader = gt.AdaptiveDataLoader(dataset, batch_size=256, train=False)
    correct = total = 0
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            predictions = model(x.to(gt.device())).argmax(dim=1).cpu()
            correct += int((predictions == y).sum())
            total += len(y)
    model.train()
    counts = torch.tensor([correct, total], dtype=torch.float64)
    if gt.world_size() > 1:
        torch.distributed.all_reduce(counts)
    return float(counts[0] / counts[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=2000)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gt.init()
    torch.manual_seed(0)
    train_set, test_set = StripesDataset(args.train_size, seed=1), StripesDataset(1000, seed=2)
    net = make_cnn()
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    model = gt.AdaptiveDataParallel(net, optimizer, scheduler, amp=args.amp)
    loader = gt.AdaptiveDataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                   max_batch_size=1024, local_bsz_bounds=(16, 256))
    for epoch in gt.remaining_epochs(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(gt.device())), y.to(gt.device()))
            model.backward(loss)
            optimizer.step()
        scheduler.step()
        accuracy = evaluate(model, test_set)
        if gt.rank() == 0:
            print(f"epoch={epoch} loss={loss.item():.4f} test_accuracy={accuracy:.4f}", flush=True)
    accuracy = evaluate(model, test_set)
    if gt.rank() == 0:
        print(f"accuracy={accuracy:.4f}", flush=True)


if __name__ == "__main__":
    main()
