"""Neural collaborative filtering in the style of AdaptDL's NCF example (examples/NCF: NeuMF,
GMF and MLP towers, BCE loss, Adam, four sampled negatives per positive), on a synthetic
MovieLens-1M-sized interaction set, with the Goodput SDK. bench/live-decisions.ts runs it on a
busy local server; standalone: /usr/bin/python3 bench/ncf_live.py --epochs 1
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import goodput.torch as gt  # noqa: E402

USERS, ITEMS = 6040, 3706  # MovieLens-1M's counts


class NCF(nn.Module):
    """NeuMF-end of the NCF paper as AdaptDL's example has it: GMF x MLP, then one linear layer."""

    def __init__(self, users: int, items: int, factors: int = 32, layers: int = 3):
        super().__init__()
        self.user_gmf = nn.Embedding(users, factors)
        self.item_gmf = nn.Embedding(items, factors)
        width = factors * 2 ** (layers - 1)
        self.user_mlp = nn.Embedding(users, width)
        self.item_mlp = nn.Embedding(items, width)
        mlp = []
        for i in range(layers):
            size = factors * 2 ** (layers - i)
            mlp += [nn.Linear(size, size // 2), nn.ReLU()]
        self.mlp = nn.Sequential(*mlp)
        self.predict = nn.Linear(factors * 2, 1)

    def forward(self, user: torch.Tensor, item: torch.Tensor) -> torch.Tensor:
        gmf = self.user_gmf(user) * self.item_gmf(item)
        mlp = self.mlp(torch.cat([self.user_mlp(user), self.item_mlp(item)], dim=-1))
        return self.predict(torch.cat([gmf, mlp], dim=-1)).view(-1)


def interactions(positives: int, negatives: int, seed: int = 0) -> TensorDataset:
    """Implicit feedback: each user's positives among popular items, `negatives` random ones each."""
    rng = np.random.default_rng(seed)
    users = rng.integers(0, USERS, positives)
    items = np.minimum(rng.zipf(1.3, positives) - 1, ITEMS - 1)
    neg_users = np.repeat(users, negatives)
    neg_items = rng.integers(0, ITEMS, positives * negatives)
    u = torch.tensor(np.concatenate([users, neg_users]), dtype=torch.long)
    i = torch.tensor(np.concatenate([items, neg_items]), dtype=torch.long)
    label = torch.cat([torch.ones(positives), torch.zeros(positives * negatives)])
    return TensorDataset(u, i, label)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--positives", type=int, default=20000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    gt.init()
    torch.manual_seed(0)
    net = NCF(USERS, ITEMS)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    model = gt.AdaptiveDataParallel(net, optimizer)  # Adam: the square-root learning-rate rule
    loader = gt.AdaptiveDataLoader(interactions(args.positives, 4), batch_size=args.batch_size,
                                   shuffle=True, drop_last=True, max_batch_size=8192,
                                   local_bsz_bounds=(32, 2048), gradient_accumulation=False)
    loss_function = nn.BCEWithLogitsLoss()
    for epoch in gt.remaining_epochs(args.epochs):
        total, count = 0.0, 0
        for user, item, label in loader:
            optimizer.zero_grad()
            loss = loss_function(model(user, item), label)
            loss.backward()
            optimizer.step()
            total, count = total + loss.item(), count + 1
        if gt.rank() == 0:
            print(f"epoch {epoch}: loss {total / max(count, 1):.4f}", flush=True)


if __name__ == "__main__":
    main()
