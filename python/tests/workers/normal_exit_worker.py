"""One replica of a 2-replica gloo SDK job that ends normally (exit 0) with no checkpoint after its
last collectives: `gt.init(checkpoint_every_epoch=False)`, a few epochs of training under
AdaptiveDataParallel, and with `--own-collective` an all-reduce of the script's own after the
epoch loop, on a tensor that dies with the function that made it.

With `--rank0-collective` only rank 0 runs that all-reduce: a script whose ranks disagree on
when to stop; rank 1's exit must not hold rank 0 up (it fails at once: peer closed).

The SDK's DistributedDataParallel keeps the process group (and its gloo worker threads) alive
through interpreter finalization, so a gloo thread that drops the last collectives late frees
their tensors then: the exit crash docs/sdk.md ("A normal exit") describes. A reproduction tool,
not a test: run it under tests/tools/gloo_exit_amplifier.py.
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
    parser.add_argument("--rank0-collective", action="store_true",
                        help="the own all-reduce on rank 0 only: a script whose ranks disagree")
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
    if args.own_collective or (args.rank0_collective and gt.rank() == 0):
        own_collective()
    print(f"rank={gt.rank()} done", flush=True)


if __name__ == "__main__":
    main()
