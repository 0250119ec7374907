"""Test replica for the AdaptDL-compatible API: 100 samples whose value is their index.

    --drop-last          AdaptiveDataLoader(..., drop_last=True), global batch 32
    --stop-at-step N     gt.request_stop() once N optimizer steps are done (checkpoint, exit 143)
    --batch-size B       global batch without --drop-last (default 20)
    --step-sleep-s S     sleep after every step (spaces the replicas' control rounds)

Prints, on rank 0, `epoch=E samples=S index_sum=I batches=[...]` per epoch from an Accumulator
created inside the epoch (as AdaptDL's examples do) and `total samples=S` at the end from one
created before the loop; every rank prints `rank=R local_sizes=[...]` per epoch."""

import argparse
import time

import torch
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt

SAMPLES = 100


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--drop-last", action="store_true")
    parser.add_argument("--stop-at-step", type=int, default=-1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--step-sleep-s", type=float, default=0.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runtime = gt.init()
    net = torch.nn.Linear(1, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    model = gt.AdaptiveDataParallel(net, optimizer)
    index = torch.arange(SAMPLES)
    dataset = TensorDataset(index.float().unsqueeze(1), index % 2, index)
    batch = 32 if args.drop_last else args.batch_size
    loader = gt.AdaptiveDataLoader(dataset, batch_size=batch, shuffle=True,
                                   drop_last=args.drop_last)
    totals = gt.Accumulator()
    for epoch in gt.remaining_epochs(args.epochs):
        stats = gt.Accumulator()
        sizes = []
        for x, y, idx in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            time.sleep(args.step_sleep_s)  # inside the step: the SDK times it
            optimizer.step()
            sizes.append(len(idx))
            stats["samples"] += len(idx)
            stats["index_sum"] += int(idx.sum())
            totals["samples"] += len(idx)
            if runtime.steps_done == args.stop_at_step:
                gt.request_stop()
        print(f"rank={gt.rank()} epoch={epoch} local_sizes={sizes} len={len(loader)}",
              flush=True)
        with stats.synchronized():
            if gt.rank() == 0:
                print(f"epoch={epoch} samples={stats['samples']} "
                      f"index_sum={stats['index_sum']}", flush=True)
    with totals.synchronized():
        if gt.rank() == 0:
            print(f"total samples={totals['samples']}", flush=True)


if __name__ == "__main__":
    main()
