"""Test replica: NCF-style evaluation (issue 52). The test set holds USERS users' 100 items each,
one user per batch of 100, as AdaptDL's NCF example builds it; each batch is ranked with
torch.topk(10) and hit@10 counted. Writes this rank's batches (sizes, users) as JSON.
Arguments: OUT_DIR USERS [TRIM [drop_last]]: TRIM items cut from the end (a short last batch)."""

import json
import os
import sys

import torch
from torch.utils.data import TensorDataset

import goodput.torch as gt

ITEMS = 100


def main() -> None:
    out_dir, users = sys.argv[1], int(sys.argv[2])
    trim = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    drop_last = len(sys.argv) > 4 and sys.argv[4] == "drop_last"
    torch.set_num_threads(1)
    gt.init()
    user = torch.arange(users).repeat_interleave(ITEMS)
    item = torch.arange(users * ITEMS)
    label = (item % ITEMS == 0).float()  # the first item of each user is the positive one
    test_set = TensorDataset(user, item, label)
    if trim > 0:  # the remainder a plain DataLoader gives as its last, short batch
        test_set = TensorDataset(user[:-trim], item[:-trim], label[:-trim])
    loader = gt.AdaptiveDataLoader(test_set, batch_size=ITEMS, shuffle=False, train=False,
                                   drop_last=drop_last)
    batches, hits = [], 0
    for _ in range(2):  # two passes: the loader is reused as an evaluation loop is
        batches = []
        for u, i, y in loader:
            scores = -(i % ITEMS).float()  # a model that ranks the positive item first
            _, top = torch.topk(scores, 10)
            hits += int(y[top].sum())
            batches.append({"size": len(u), "users": sorted(set(u.tolist()))})
    counts = torch.tensor([hits], dtype=torch.float64)
    if gt.world_size() > 1:
        torch.distributed.all_reduce(counts)
    with open(os.path.join(out_dir, f"rank{gt.rank()}.json"), "w") as f:
        json.dump({"batches": batches, "len": len(loader), "hits": int(counts[0])}, f)


if __name__ == "__main__":
    main()
