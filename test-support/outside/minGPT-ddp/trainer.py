"""Trainer of minGPT: DDP wrapping, epochs, and the snapshot it resumes from."""
import os
from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional

import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


@dataclass
class TrainerConfig:
    max_epochs: int = None
    batch_size: int = 32
    save_every: int = 1
    snapshot_path: Optional[str] = None


@dataclass
class Snapshot:
    model_state: "OrderedDict[str, torch.Tensor]"
    optimizer_state: Dict[str, Any]
    finished_epoch: int


class Trainer:
    def __init__(self, trainer_config, model, optimizer, train_dataset, test_dataset=None):
        self.config = trainer_config
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        self.train_loader = DataLoader(train_dataset, batch_size=self.config.batch_size, sampler=DistributedSampler(train_dataset))
        self.epochs_run = 0
        self.model = model
        self.optimizer = optimizer
        self._load_snapshot()
        self.model = DDP(self.model)

    def _load_snapshot(self):
        try:
            snapshot = torch.load(self.config.snapshot_path, map_location="cpu")
        except FileNotFoundError:
            return
        snapshot = Snapshot(**snapshot)
        self.model.load_state_dict(snapshot.model_state)
        self.optimizer.load_state_dict(snapshot.optimizer_state)
        self.epochs_run = snapshot.finished_epoch

    def _save_snapshot(self, epoch):
        raw_model = self.model.module if hasattr(self.model, "module") else self.model
        snapshot = Snapshot(raw_model.state_dict(), self.optimizer.state_dict(), epoch)
        torch.save(asdict(snapshot), self.config.snapshot_path)

    def train(self):
        for epoch in range(self.epochs_run, self.config.max_epochs):
            for x, y in self.train_loader:
                self.optimizer.zero_grad()
                _, loss = self.model(x, y)
                loss.backward()
                self.optimizer.step()
            if self.global_rank == 0 and epoch % self.config.save_every == 0:
                self._save_snapshot(epoch)
