"""Test replica: one replica, no accumulation, adaptive batch: the spec's biased K = 1 fallback
(this step's gradient and the previous step's) matches a plain re-computation. Prints OK n=..."""

import torch
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt


def main() -> None:
    torch.set_num_threads(1)
    gt.init()
    torch.manual_seed(0)
    x, y = torch.randn(960, 6), torch.randint(0, 3, (960,))
    net = torch.nn.Linear(6, 3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=16, shuffle=True,
                                   max_batch_size=256)
    previous, checked = None, 0
    for bx, by in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(bx), by).backward()
        optimizer.step()
        grad = torch.cat([p.grad.reshape(-1) for p in net.parameters()]).clone()
        sample = model.last_noise_sample
        if sample is not None:
            assert sample.biased and (sample.small_batch, sample.total_batch) == (16, 32)
            expected_small = (previous.dot(previous) + grad.dot(grad)) / 2
            mean = (previous + grad) / 2
            assert torch.allclose(torch.as_tensor(sample.small_sqr), expected_small, rtol=1e-5)
            assert torch.allclose(torch.as_tensor(sample.total_sqr), mean.dot(mean), rtol=1e-5)
            checked += 1
        previous = grad
    assert checked >= 1 and model.noise.updates == checked, (checked, model.noise.updates)
    print(f"OK n={checked}", flush=True)


if __name__ == "__main__":
    main()
