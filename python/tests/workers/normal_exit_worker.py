"""One replica of a 2-replica gloo SDK job that ends normally (exit 0) with no checkpoint after its
last collectives: `gt.init(checkpoint_every_epoch=False)`, a few epochs of training under
AdaptiveDataParallel, and with `--own-collective` an all-reduce of the script's own after the
epoch loop, on a tensor that dies with the function that made it.

The SDK's DistributedDataParallel keeps the process group (and its gloo worker threads) alive
through interpreter finalization, so a gloo thread that drops the last collectives late frees
their tensors then (the exit crash goodput/torch/exit_barrier.py prevents). Run under
tests/tools/gloo_exit_amplifier.py to reproduce that crash (test_normal_exit.py reproduces its
cause deterministically with exit_hold_worker.py).
"""

import argparse

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt


def own_collective() -> None:
    total = torch.ones(1 << 16)
    dist.all_reduce(total)  # the tensor dies on return, the gloo thread may still hold it
    print(f"rank={gt.rank()} own all-reduce: {total[0].item():.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--own-collective", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gt.init(checkpoint_every_epoch=False)
    torch.manual_seed(0)
    x, y = torch.randn(256, 4), torch.randint(0, 3, (256,))
    net = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32)
    for _ in gt.remaining_epochs(args.epochs):
        for bx, by in loader:
            optimizer.zero_grad()
            model.backward(F.cross_entropy(model(bx), by))
            optimizer.step()
    if args.own_collective:
        own_collective()
    print(f"rank={gt.rank()} done", flush=True)


if __name__ == "__main__":
    main()
