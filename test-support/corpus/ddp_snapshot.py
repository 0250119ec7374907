"""Data-parallel training as a torchrun user writes it: one process per rank, the rank read from
the environment torchrun sets, gloo process group, DistributedSampler, and a snapshot
(model, optimizer, epochs_run) written by rank 0 so that a restart resumes where it stopped.
Synthetic data: nothing is downloaded. Knows nothing of Goodput.

    torchrun --nproc_per_node 2 ddp_snapshot.py --epochs 20 --snapshot snapshot.pt
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_data(n=512, features=20):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, 1, generator=g)
    return TensorDataset(x, x @ w + 0.1 * torch.randn(n, 1, generator=g))


class Trainer:
    def __init__(self, model, data, batch_size, snapshot_path, save_every):
        self.rank = int(os.environ["RANK"])
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.sampler = DistributedSampler(data)
        self.loader = DataLoader(data, batch_size=batch_size, sampler=self.sampler)
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.snapshot_path = snapshot_path
        self.save_every = save_every
        self.epochs_run = 0
        if os.path.exists(snapshot_path):
            self.load_snapshot()
        self.ddp = DDP(self.model)

    def load_snapshot(self):
        snapshot = torch.load(self.snapshot_path)
        self.model.load_state_dict(snapshot["model"])
        self.optimizer.load_state_dict(snapshot["optimizer"])
        self.epochs_run = snapshot["epochs_run"]
        print(f"[rank {self.rank}] resuming from snapshot at epoch {self.epochs_run}", flush=True)

    def save_snapshot(self, epochs_run):
        tmp = self.snapshot_path + ".tmp"
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "epochs_run": epochs_run}, tmp)
        os.replace(tmp, self.snapshot_path)

    def train(self, epochs, epoch_sleep_s):
        for epoch in range(self.epochs_run, epochs):
            self.sampler.set_epoch(epoch)
            total = 0.0
            for x, y in self.loader:
                self.optimizer.zero_grad()
                loss = F.mse_loss(self.ddp(x), y)
                loss.backward()
                self.optimizer.step()
                total += loss.item()
            time.sleep(epoch_sleep_s)
            if self.rank == 0 and (epoch + 1) % self.save_every == 0:
                self.save_snapshot(epoch + 1)
            print(f"[rank {self.rank}] epoch {epoch} done, world {self.world}, loss {total / len(self.loader):.4f}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--save-every", type=int, default=1)
    parser.add_argument("--snapshot", default="snapshot.pt")
    parser.add_argument("--epoch-sleep-s", type=float, default=0.0)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    print(f"[rank {dist.get_rank()}] started: world {dist.get_world_size()}, local rank {os.environ['LOCAL_RANK']}, "
          f"group rank {os.environ.get('GROUP_RANK')}, OMP_NUM_THREADS {os.environ.get('OMP_NUM_THREADS')}", flush=True)
    trainer = Trainer(torch.nn.Linear(20, 1), make_data(), args.batch_size, args.snapshot, args.save_every)
    trainer.train(args.epochs, args.epoch_sleep_s)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
