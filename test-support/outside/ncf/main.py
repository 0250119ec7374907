# Neural collaborative filtering (AdaptDL's example, ported to the Goodput SDK).
import argparse
import os
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim as optim

import goodput.torch as gt

import config
import data_utils
import evaluate
import model

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.001, help="learning rate")
parser.add_argument("--batch_size", type=int, default=256, help="batch size for training")
parser.add_argument("--epochs", type=int, default=20, help="training epoches")
parser.add_argument("--top_k", type=int, default=10, help="compute metrics@top_k")
parser.add_argument("--gpu", type=str, default="0", help="gpu card ID")
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
cudnn.benchmark = True

train_data, test_data, user_num, item_num, train_mat = data_utils.load_all()
gt.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
net = model.NCF(user_num, item_num, 32, 3, 0.0, config.model)
optimizer = optim.Adam(net.parameters(), lr=args.lr)
net = gt.AdaptiveDataParallel(net, optimizer)
loader = gt.AdaptiveDataLoader(train_data, batch_size=args.batch_size, shuffle=True, drop_last=True)
loss_function = nn.BCEWithLogitsLoss()

for epoch in gt.remaining_epochs_until(args.epochs):
    start = time.time()
    for user, item, label in loader:
        optimizer.zero_grad()
        loss_function(net(user, item), label.float()).backward()
        optimizer.step()
    HR, NDCG = evaluate.metrics(net, test_data, args.top_k)
    print(f"epoch {epoch} took {time.time() - start:.1f}s: HR {np.mean(HR):.3f} NDCG {np.mean(NDCG):.3f}")
