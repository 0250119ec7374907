"""Test replica: trains a small linear model on a synthetic data set whose samples carry their
index, logging which indices each rank trained on, and dumping model/loader state at start and
at exit. Arguments: OUT_DIR EPOCHS BATCH_SIZE STOP_AT_STEP (0 = never)."""

import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset

import goodput.torch as gt

DATASET_LEN = 1200


class IndexedDataset(Dataset):
    def __len__(self) -> int:
        return DATASET_LEN

    def __getitem__(self, index: int):
        generator = torch.Generator().manual_seed(index)
        x = torch.randn(8, generator=generator)
        return x, int(x.sum() > 0), index


def dump(path: str, model: gt.AdaptiveDataParallel, loader: gt.AdaptiveDataLoader) -> None:
    torch.save({"module": model.module.state_dict(), "optimizer": model.optimizer.state_dict(),
                "epoch_position": loader.epoch_position, "steps": gt.current().steps_done}, path)


def main() -> None:
    out_dir, epochs, batch_size, stop_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4])
    torch.set_num_threads(1)
    runtime = gt.init()
    attempt, rank = runtime.env.attempt, gt.rank()
    torch.manual_seed(1234)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(IndexedDataset(), batch_size=batch_size, shuffle=True)
    dump(os.path.join(out_dir, f"start-a{attempt}-r{rank}.pt"), model, loader)
    seen = open(os.path.join(out_dir, f"seen-a{attempt}-r{rank}.txt"), "w")
    try:
        for epoch in gt.remaining_epochs(epochs):
            for x, y, index in loader:
                seen.write(f"{epoch} " + " ".join(str(i) for i in index.tolist()) + "\n")
                seen.flush()
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
                if stop_at and runtime.steps_done == stop_at and rank == 0:
                    gt.request_stop()  # only rank 0 "gets SIGTERM": the others must agree
    finally:
        dump(os.path.join(out_dir, f"end-a{attempt}-r{rank}.pt"), model, loader)
        seen.close()
    print(f"done rank={rank} steps={runtime.steps_done}", flush=True)


if __name__ == "__main__":
    main()
