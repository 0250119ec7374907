# minGPT trained with DDP under torchrun; resumes from the trainer's snapshot.
import os

import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.utils.data import random_split

from char_dataset import CharDataset, DataConfig
from model import GPT, GPTConfig, OptimizerConfig, create_optimizer
from trainer import Trainer, TrainerConfig


def ddp_setup():
    init_process_group(backend="gloo")
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def main():
    ddp_setup()
    dataset = CharDataset(DataConfig(path="data/input.txt", block_size=128))
    train_set, test_set = random_split(dataset, [int(len(dataset) * 0.9), len(dataset) - int(len(dataset) * 0.9)])
    model = GPT(GPTConfig(vocab_size=dataset.vocab_size, block_size=128))
    optimizer = create_optimizer(model, OptimizerConfig())
    trainer = Trainer(TrainerConfig(max_epochs=10, snapshot_path="gpt_snapshot.pt"), model, optimizer, train_set, test_set)
    trainer.train()
    destroy_process_group()


if __name__ == "__main__":
    main()
