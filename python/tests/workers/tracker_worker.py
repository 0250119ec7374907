"""Test replica: trains a small MLP on scikit-learn's digits with the SDK, registers a tracker
that appends every (step, scalars) call as a JSON line to argv[1], and a second tracker that
raises (it must be skipped, not stop training). Prints DONE steps=N."""

import json
import sys

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.utils.data import TensorDataset

import goodput.torch as gt


def main() -> None:
    out_path = sys.argv[1]
    torch.set_num_threads(1)
    gt.init()
    torch.manual_seed(0)
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=64, shuffle=True,
                                   max_batch_size=512)
    calls = open(out_path, "w")
    gt.add_tracker(lambda step, scalars: calls.write(json.dumps({"step": step, **scalars}) + "\n"))

    def broken(step, scalars):
        raise RuntimeError("tracker bug")

    gt.add_tracker(broken)
    for _ in range(3):
        for bx, by in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(bx), by).backward()
            optimizer.step()
    calls.close()
    print(f"DONE steps={gt.current().steps_done}", flush=True)


if __name__ == "__main__":
    main()
