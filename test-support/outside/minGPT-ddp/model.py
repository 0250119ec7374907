from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class GPTConfig:
    vocab_size: int = 65
    block_size: int = 128
    n_layer: int = 2


@dataclass
class OptimizerConfig:
    learning_rate: float = 3e-4


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.head = nn.Linear(config.block_size, config.vocab_size)


def create_optimizer(model, config):
    return torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
