"""Test replica written the way torchrun scripts are: it creates (OWN_GROUP=1) or lets the SDK
create the process group, trains under the SDK, and tears the group down itself in `finally`
(`dist.destroy_process_group()`), as the PyTorch DDP tutorial's cleanup() does. Prints
`step=N` on rank 0 as it trains, for the test to stop it under way."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt


def main() -> None:
    torch.set_num_threads(1)
    if os.environ.get("OWN_GROUP") == "1":
        dist.init_process_group("gloo")
    gt.init()
    try:
        torch.manual_seed(0)
        x, y = torch.randn(512, 4), torch.randint(0, 3, (512,))
        net = torch.nn.Linear(4, 3)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
        model = gt.AdaptiveDataParallel(net, optimizer)
        loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32)
        step = 0
        for _ in gt.remaining_epochs(10_000):
            for bx, by in loader:
                optimizer.zero_grad()
                model.backward(F.cross_entropy(model(bx), by))
                optimizer.step()
                step += 1
                if gt.rank() == 0 and step % 20 == 0:
                    print(f"step={step}", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
