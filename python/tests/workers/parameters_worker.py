"""Test replica: a model with a frozen layer and a head whose weight a second layer shares, so
that its trained parameter count (27: the head's 8 x 3 weights and 3 biases, once) differs from
every other count (all parameters: 83; trained, shared ones twice: 51). Trains a few steps
through AdaptiveDataParallel and prints DONE."""

import torch
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt

TRAINED_PARAMETERS = 8 * 3 + 3


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.frozen = torch.nn.Linear(6, 8)
        self.frozen.requires_grad_(False)
        self.head = torch.nn.Linear(8, 3)
        self.tied = torch.nn.Linear(8, 3, bias=False)
        self.tied.weight = self.head.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.frozen(x))
        return self.head(hidden) + self.tied(hidden)


def main() -> None:
    torch.set_num_threads(1)
    gt.init()
    torch.manual_seed(0)
    x, y = torch.randn(320, 6), torch.randint(0, 3, (320,))
    net = Net()
    optimizer = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.05)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    for _ in gt.remaining_epochs(2):
        for bx, by in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(bx), by).backward()
            optimizer.step()
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
