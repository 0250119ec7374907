"""A single-process MNIST-style classifier as found in tutorials: a small convolutional network
on 28x28 images, trained epoch after epoch with no checkpoint at all. The images are synthetic
(random digits-like blobs), so nothing is downloaded. Knows nothing of Goodput.

    python3 mnist_plain.py --epochs 5
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.fc = nn.Linear(8 * 13 * 13, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(x, 1))


def synthetic_mnist(n=256):
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 10, (n,), generator=g)
    images = torch.randn(n, 1, 28, 28, generator=g) * 0.3
    for i, label in enumerate(labels.tolist()):
        images[i, 0, 2 * label:2 * label + 8, 4:24] += 1.0
    return TensorDataset(images, labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--epoch-sleep-s", type=float, default=0.0)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(synthetic_mnist(), batch_size=64, shuffle=True)
    for epoch in range(1, args.epochs + 1):
        correct = 0
        for x, y in loader:
            optimizer.zero_grad()
            out = model(x)
            F.cross_entropy(out, y).backward()
            optimizer.step()
            correct += (out.argmax(1) == y).sum().item()
        time.sleep(args.epoch_sleep_s)
        print(f"epoch {epoch} accuracy {correct / len(loader.dataset):.3f}", flush=True)


if __name__ == "__main__":
    main()
