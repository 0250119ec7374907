import numpy as np
import torch.utils.data as data

import config


def load_all(test_num=100):
    train_data = np.zeros((1000, 2), dtype=np.int64)
    return train_data, train_data, 100, 100, None


class NCFData(data.Dataset):
    def __init__(self, features, num_item):
        self.features = features
        self.num_item = num_item
