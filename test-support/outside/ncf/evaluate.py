import numpy as np
import torch


def metrics(model, test_loader, top_k):
    HR, NDCG = [], []
    for user, item, label in test_loader:
        predictions = model(user, item)
        _, indices = torch.topk(predictions, top_k)
        HR.append(0.0)
        NDCG.append(0.0)
    return np.mean(HR), np.mean(NDCG)
