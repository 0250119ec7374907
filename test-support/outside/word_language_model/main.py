# Word-level language model on a text corpus: an RNN or Transformer trained for a few epochs.
import argparse
import math
import time

import torch
import torch.nn as nn

import data
import model

parser = argparse.ArgumentParser(description='word-level language model')
parser.add_argument('--data', type=str, default='./data/wikitext-2', help='location of the data corpus')
parser.add_argument('--model', type=str, default='LSTM', help='RNN_TANH, RNN_RELU, LSTM, GRU, Transformer')
parser.add_argument('--epochs', type=int, default=40, help='upper epoch limit')
parser.add_argument('--batch_size', type=int, default=20, metavar='N', help='batch size')
parser.add_argument('--save', type=str, default='model.pt', help='path to save the final model')
parser.add_argument('--cuda', action='store_true', help='use CUDA')
args = parser.parse_args()

device = torch.device('cuda' if args.cuda else 'cpu')
corpus = data.Corpus(args.data)
net = model.RNNModel(args.model, len(corpus.dictionary), 200, 200, 2).to(device)
criterion = nn.NLLLoss()
best_val_loss = None

for epoch in range(1, args.epochs + 1):
    start = time.time()
    loss = net.train_epoch(corpus.train, criterion, args.batch_size)
    if not best_val_loss or loss < best_val_loss:
        with open(args.save, 'wb') as f:
            torch.save(net, f)
        best_val_loss = loss
    print(f'| epoch {epoch:3d} | {time.time() - start:5.2f}s | ppl {math.exp(loss):8.2f}')
