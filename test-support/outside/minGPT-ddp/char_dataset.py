from dataclasses import dataclass

import torch
from torch.utils.data import Dataset


@dataclass
class DataConfig:
    path: str = None
    block_size: int = None


class CharDataset(Dataset):
    def __init__(self, config):
        data = open(config.path).read()
        self.stoi = {ch: i for i, ch in enumerate(sorted(set(data)))}
        self.vocab_size = len(self.stoi)
        self.block_size = config.block_size
        self.data = data

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        chunk = [self.stoi[s] for s in self.data[idx:idx + self.block_size + 1]]
        return torch.tensor(chunk[:-1]), torch.tensor(chunk[1:])
