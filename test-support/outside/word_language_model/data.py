import os
from io import open

import torch


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]


class Corpus:
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(os.path.join(path, 'train.txt'))

    def tokenize(self, path):
        with open(path, 'r', encoding='utf8') as f:
            ids = [self.dictionary.add_word(w) for line in f for w in line.split() + ['<eos>']]
        return torch.tensor(ids, dtype=torch.int64)
