import torch
import torch.nn as nn


class NCF(nn.Module):
    def __init__(self, user_num, item_num, factor_num, num_layers, dropout, model):
        super().__init__()
        self.embed_user = nn.Embedding(user_num, factor_num)
        self.embed_item = nn.Embedding(item_num, factor_num)
        self.predict_layer = nn.Linear(factor_num, 1)

    def forward(self, user, item):
        return self.predict_layer(self.embed_user(user) * self.embed_item(item)).view(-1)
