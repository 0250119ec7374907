"""MLP on scikit-learn's digits data set (1797 real 8x8 handwritten digits, shipped with
scikit-learn) trained with the Goodput SDK.

    python examples/digits/train.py                          # standalone, fixed batch size
    torchrun --nproc_per_node=2 examples/digits/train.py     # 2 replicas, still resumable
    goodput submit examples/digits/job.yaml                  # elastic, under the control plane

The last line printed (rank 0) is `accuracy=<test accuracy>`.
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch.utils.data import TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import goodput.torch as gt  # noqa: E402  (works installed or from a source checkout)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64, help="initial global batch")
    parser.add_argument("--max-batch-size", type=int, default=512)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads per replica")
    parser.add_argument("--seen-dir", default=None,
                        help="append the training sample indices each rank reads to "
                             "DIR/seen-a<attempt>-r<rank>.txt (tests check none is skipped or "
                             "read twice across restarts)")
    return parser.parse_args()


def digits_splits():
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=0,
                                                        stratify=y)
    return TensorDataset(x_train, y_train, torch.arange(len(y_train))), TensorDataset(x_test, y_test)


def evaluate(model: torch.nn.Module, dataset: TensorDataset) -> float:
    model.eval()
    with torch.no_grad():
        x, y = dataset.tensors
        predictions = model(x.to(gt.device())).argmax(dim=1).cpu()
    model.train()
    return (predictions == y).float().mean().item()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    runtime = gt.init()
    torch.manual_seed(0)
    train_set, test_set = digits_splits()
    net = torch.nn.Sequential(torch.nn.Linear(64, args.hidden), torch.nn.ReLU(),
                              torch.nn.Linear(args.hidden, 10))
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    model = gt.AdaptiveDataParallel(net, optimizer, scheduler)
    loader = gt.AdaptiveDataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                   max_batch_size=args.max_batch_size, local_bsz_bounds=(8, 256),
                                   gradient_accumulation=True)
    seen = None
    if args.seen_dir:
        seen = open(os.path.join(args.seen_dir, f"seen-a{runtime.env.attempt}-r{gt.rank()}.txt"), "a")
    for epoch in gt.remaining_epochs(args.epochs):
        for x, y, index in loader:
            if seen:
                seen.write(f"{epoch} " + " ".join(str(i) for i in index.tolist()) + "\n")
                seen.flush()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(gt.device())), y.to(gt.device()))
            model.backward(loss)
            optimizer.step()
        scheduler.step()
        if gt.rank() == 0:
            print(f"epoch={epoch} replicas={gt.world_size()} local_bsz={loader.current_local_bsz} "
                  f"loss={loss.item():.4f} test_accuracy={evaluate(model.module, test_set):.4f}",
                  flush=True)
    accuracy = evaluate(model.module, test_set)
    if gt.rank() == 0:
        print(f"accuracy={accuracy:.4f}", flush=True)


if __name__ == "__main__":
    main()
